import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { fastify, type FastifyInstance } from 'fastify';
import { createSilentLogger } from '@aks-flex-node/log';
import { shutdownServerOptions } from '../app.js';
import { closeWithin } from './close-within.js';
import { listenOn } from './listen.js';

// A daemon stopping for a restart must answer every connection it accepted:
// a connection it cuts off unanswered is a request refused, though systemd
// holds every later connection for the next daemon.

const graceMs = 5_000;
const request = (url: string) => `GET ${url} HTTP/1.1\r\nHost: localhost\r\n\r\n`;

let tmp: string;
let socketPath: string;
let app: FastifyInstance;
let releaseSlow: () => void;
let slowEntered: Promise<void>;
const clients: Socket[] = [];

async function start(): Promise<void> {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'close-within-'));
  socketPath = path.join(tmp, 'run/agent.sock');
  let enter: () => void = () => undefined;
  slowEntered = new Promise((resolve) => (enter = resolve));
  const released = new Promise<void>((resolve) => (releaseSlow = resolve));
  app = fastify(shutdownServerOptions);
  app.get('/fast', () => ({ ok: true }));
  app.get('/slow', async () => {
    enter();
    await released;
    return { ok: true };
  });
  await app.ready();
  await listenOn(app.server, { kind: 'self-bound', socketPath });
}

afterEach(async () => {
  for (const client of clients) client.destroy();
  clients.length = 0;
  releaseSlow();
  await app.close();
  await rm(tmp, { recursive: true, force: true });
});

/** Connects and resolves once the server has accepted the connection. */
async function connectAccepted(): Promise<Socket> {
  const accepted = new Promise<void>((resolve) =>
    app.server.once('connection', () => {
      resolve();
    }),
  );
  const client = connect(socketPath);
  clients.push(client);
  await accepted;
  return client;
}

/** Resolves once the server has read a request for `url`. */
function requestArrived(url: string): Promise<void> {
  return new Promise((resolve) => {
    const seen = (incoming: IncomingMessage) => {
      if (incoming.url !== url) return;
      app.server.off('request', seen);
      resolve();
    };
    app.server.on('request', seen);
  });
}

/** Everything the server sends until it closes the connection. */
function readUntilClosed(client: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    client.setEncoding('utf8');
    client.on('data', (chunk: string) => (text += chunk));
    client.on('error', () => undefined);
    client.on('close', () => {
      resolve(text);
    });
  });
}

/** The status line of each answer; a body is not followed by a line break. */
function statusLines(text: string): string[] {
  return text.match(/HTTP\/1\.1 \d{3} [A-Za-z ]+/g) ?? [];
}

// The daemon listens on fastify's server through listen.ts, not fastify's listen().
describe('closeWithin', () => {
  beforeEach(async () => {
    await start();
  });

  it('closes a kept-alive connection that is idle at once, and returns once it has closed', async () => {
    const client = await connectAccepted();
    const answer = readUntilClosed(client);
    client.write(request('/fast'));
    await new Promise<void>((resolve) =>
      client.once('data', () => {
        resolve();
      }),
    );

    await closeWithin(app, graceMs, createSilentLogger());

    const open = await new Promise<number>((resolve, reject) =>
      app.server.getConnections((error, count) => {
        if (error) reject(error);
        else resolve(count);
      }),
    );
    expect(open).toBe(0);
    // Closed by the server, not by the keep-alive timeout (72 s) or the grace
    // (5 s): either of those would outlast vitest's 5 s test timeout.
    expect(statusLines(await answer)).toEqual(['HTTP/1.1 200 OK']);
  });

  it('answers a connection it accepted before the close, though its request arrives after', async () => {
    const client = await connectAccepted();
    const answer = readUntilClosed(client);

    const closed = closeWithin(app, graceMs, createSilentLogger());
    // The listener closes before closeWithin first waits, so the request below arrives after.
    expect(app.server.listening).toBe(false);
    client.write(request('/fast'));
    await closed;

    expect(statusLines(await answer)).toEqual(['HTTP/1.1 200 OK']);
  });

  it('answers, not with 503, a request sent on a busy connection after the close began', async () => {
    const client = await connectAccepted();
    const answer = readUntilClosed(client);
    client.write(request('/slow'));
    await slowEntered;

    const closed = closeWithin(app, graceMs, createSilentLogger());
    expect(app.server.listening).toBe(false);
    const fastArrived = requestArrived('/fast');
    client.write(request('/fast'));
    // The second request is read while the first is still busy, then the first ends.
    await fastArrived;
    releaseSlow();
    await closed;

    expect(statusLines(await answer)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
  });

  it('accepts no connection once the close began, and still ends within the grace', async () => {
    const idle = await connectAccepted();
    const idleClosed = readUntilClosed(idle);

    // The grace is closeWithin's own timer: faked, it passes when the test says.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const closed = closeWithin(app, graceMs, createSilentLogger());
    const refused = await new Promise<boolean>((resolve) => {
      const late = connect(socketPath);
      clients.push(late);
      late.on('error', () => {
        resolve(true);
      });
      late.on('connect', () => {
        resolve(false);
      });
    });
    await vi.advanceTimersByTimeAsync(graceMs);
    await closed;

    expect(refused).toBe(true);
    expect(await idleClosed).toBe('');
  });
});
