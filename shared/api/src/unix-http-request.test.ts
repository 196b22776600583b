import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseResponse, requestOverUnixSocket } from './unix-http-request.js';

let tmp: string;
let socketPath: string;
let server: net.Server | undefined;

async function listen(created: net.Server): Promise<void> {
  server = created;
  await new Promise<void>((resolve) => created.listen(socketPath, resolve));
}

function request(timeoutMs = 2_000) {
  return requestOverUnixSocket({
    socketPath,
    method: 'POST',
    path: '/v1/x',
    body: '{"a":"é"}',
    timeoutMs,
  });
}

// What a server sees of each request: its method, URL, content headers and body.
function recordingServer(received: string[], answer: (response: http.ServerResponse) => void) {
  return http.createServer((incoming, response) => {
    let text = '';
    incoming.on('data', (chunk: Buffer) => (text += chunk.toString()));
    incoming.on('end', () => {
      const type = incoming.headers['content-type'] ?? '-';
      const length = incoming.headers['content-length'] ?? '-';
      received.push(`${incoming.method} ${incoming.url} ${type} ${length} ${text}`);
      // Answers later, as a route that awaits does: the request must not be aborted meanwhile.
      setTimeout(() => {
        answer(response);
      }, 50);
    });
  });
}

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'unix-http-'));
  socketPath = path.join(tmp, 'agent.sock');
});
afterEach(async () => {
  const running = server;
  server = undefined;
  if (running instanceof http.Server) running.closeAllConnections();
  if (running !== undefined) await new Promise((resolve) => running.close(resolve));
  await rm(tmp, { recursive: true, force: true });
});

describe('requestOverUnixSocket', () => {
  it.each([
    ['a body with content-length', (response: http.ServerResponse) => response.end('{"ok":"ü"}')],
    [
      'a chunked body written in parts',
      (response: http.ServerResponse) => {
        response.writeHead(201, { 'content-type': 'application/json' });
        response.write('{"ok"');
        response.end(':"ü"}');
      },
    ],
  ])('reads %s, and the server gets the request as sent', async (_name, answer) => {
    const received: string[] = [];
    await listen(recordingServer(received, answer));
    const response = await request();
    expect(response.body).toBe('{"ok":"ü"}');
    expect([200, 201]).toContain(response.status);
    expect(received).toEqual(['POST /v1/x application/json 10 {"a":"é"}']);
  });

  it('sends a GET without a body or content headers, and returns the content-type', async () => {
    const received: string[] = [];
    await listen(
      recordingServer(received, (response) => {
        response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        response.end('{}');
      }),
    );
    const response = await requestOverUnixSocket({
      socketPath,
      method: 'GET',
      path: '/v1/status',
      timeoutMs: 2_000,
    });
    expect(response).toEqual({
      status: 200,
      contentType: 'application/json; charset=utf-8',
      body: '{}',
    });
    expect(received).toEqual(['GET /v1/status - - ']);
  });

  it('rejects with ENOENT when the socket does not exist', async () => {
    await expect(request()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('gives up after the timeout when the daemon never answers', async () => {
    await listen(http.createServer(() => undefined));
    await expect(request(100)).rejects.toThrow('no answer within 100 ms');
  });

  it('returns status 0 and the text when the answer is not HTTP', async () => {
    await listen(
      net.createServer((socket) => {
        socket.on('data', () => socket.end('garbage'));
      }),
    );
    await expect(request()).resolves.toEqual({ status: 0, contentType: '', body: 'garbage' });
  });
});

describe('parseResponse', () => {
  it.each([
    [
      'HTTP/1.1 404 Not Found\r\nContent-Type: application/problem+json\r\nContent-Length: 2\r\n\r\n{}trailing',
      404,
      'application/problem+json',
      '{}',
    ],
    ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n', 200, '', '{}'],
    ['HTTP/1.0 503 Unavailable\r\n\r\nbusy', 503, '', 'busy'],
    ['HTTP/1.1 200 OK', 0, '', 'HTTP/1.1 200 OK'],
  ])('%j is status %d, content-type %j, body %j', (raw, status, contentType, body) => {
    expect(parseResponse(Buffer.from(raw))).toEqual({ status, contentType, body });
  });
});
