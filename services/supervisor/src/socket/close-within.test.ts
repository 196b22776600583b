import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
    // Closed by the server, not by the keep-alive timeout (72 s) or the grace (5 s).
    const ended = await Promise.race([
      answer,
      new Promise<undefined>((resolve) => setTimeout(resolve, 1_000, undefined)),
    ]);
    expect(ended === undefined ? [] : statusLines(ended)).toEqual(['HTTP/1.1 200 OK']);
  });

  it('answers a connection it accepted before the close, though its request arrives after', async () => {
    const client = await connectAccepted();
    const answer = readUntilClosed(client);

    const closed = closeWithin(app, graceMs, createSilentLogger());
    await new Promise((resolve) => setTimeout(resolve, 50));
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
    await new Promise((resolve) => setTimeout(resolve, 50));
    client.write(request('/fast'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    releaseSlow();
    await closed;

    expect(statusLines(await answer)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
  });

  it('accepts no connection once the close began, and still ends within the grace', async () => {
    const idle = await connectAccepted();
    const idleClosed = readUntilClosed(idle);

    const closed = closeWithin(app, 200, createSilentLogger());
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
    await closed;

    expect(refused).toBe(true);
    expect(await idleClosed).toBe('');
  });
});
