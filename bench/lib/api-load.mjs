#!/usr/bin/env node
// A load generator for an HTTP/1.1 server on a Unix socket: N clients, one
// keep-alive connection each, sending GET requests either paced (R a second
// per client, each at its scheduled time) or back to back (--saturate).
// The client is a raw socket writing a fixed request and parsing only the
// status line and Content-Length, so on a 2-core machine it costs the server
// under test as little CPU as it can: node:http's client would itself be
// the bottleneck when saturating and flatten any ratio against a baseline.
// Latency is from the write to the response's last byte (process.hrtime).
// Errors are counted apart: a non-2xx status, or a socket error/close.
// SIGTERM ends the run early, as --duration would: each client stops at its
// next send, and a request in flight is still waited for and counted.
// SIGUSR1 forgets everything measured so far and starts the count again, so
// clients already connected and steady can be measured from a given moment.
// --latencies PATH also writes every answered request's latency (ms, one a
// line), so several runs can be pooled into one percentile (bench/api.sh).
//
// Usage: node bench/lib/api-load.mjs --socket PATH [--path /v1/status] --clients N
//          (--rate R | --saturate) [--duration SECONDS] [--json] [--latencies PATH]
import { Buffer } from 'node:buffer';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import { clearTimeout, setTimeout } from 'node:timers';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    socket: { type: 'string' },
    path: { type: 'string', default: '/v1/status' },
    clients: { type: 'string', default: '1' },
    rate: { type: 'string' },
    saturate: { type: 'boolean', default: false },
    duration: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
    latencies: { type: 'string' },
  },
});

function usage(message) {
  process.stderr.write(
    `api-load: ${message}\nusage: api-load.mjs --socket PATH [--path /v1/status] --clients N (--rate R | --saturate) [--duration S] [--json] [--latencies PATH]\n`,
  );
  process.exit(2);
}

if (args.socket === undefined) usage('--socket is required');
const clients = Number(args.clients);
const durationMs = Number(args.duration) * 1000;
const rate = args.rate === undefined ? undefined : Number(args.rate);
if (!Number.isInteger(clients) || clients < 1)
  usage(`--clients must be a positive integer, got ${args.clients}`);
if (!(durationMs > 0)) usage(`--duration must be positive, got ${args.duration}`);
if (args.saturate === (rate !== undefined)) usage('give exactly one of --rate R and --saturate');
if (rate !== undefined && !(rate > 0)) usage(`--rate must be positive, got ${args.rate}`);

const request = Buffer.from(
  `GET ${args.path} HTTP/1.1\r\nHost: agent\r\nAccept: application/json\r\n\r\n`,
);
const headerEnd = Buffer.from('\r\n\r\n');

const latenciesNs = [];
const counts = { requests: 0, non2xx: 0, socketErrors: 0 };
let stopping = false;
const nowNs = () => process.hrtime.bigint();

/** One client: a connection that sends the next request when the previous answer is complete. */
function runClient(index, started) {
  return new Promise((resolve) => {
    const periodNs = rate === undefined ? 0n : BigInt(Math.round(1e9 / rate));
    // Paced clients are spread over one period so they do not all send at once.
    let nextAt = started + (periodNs * BigInt(index)) / BigInt(clients);
    let sentAt = 0n;
    let buffered = Buffer.alloc(0);
    let timer;
    let socket;

    const finish = () => {
      clearTimeout(timer);
      if (socket !== undefined) socket.destroy();
      resolve();
    };
    const send = () => {
      if (stopping) return finish();
      sentAt = nowNs();
      socket.write(request);
    };
    const schedule = () => {
      if (stopping) return finish();
      if (periodNs === 0n) return send();
      nextAt += periodNs;
      const waitMs = Number(nextAt - nowNs()) / 1e6;
      if (waitMs <= 0) send();
      else timer = setTimeout(send, waitMs);
    };
    const connect = () => {
      if (stopping) return finish();
      buffered = Buffer.alloc(0);
      socket = net.connect(args.socket);
      socket.setNoDelay(true);
      socket.on('connect', () => {
        if (periodNs === 0n) return send();
        const waitMs = Number(nextAt - nowNs()) / 1e6;
        timer = setTimeout(send, Math.max(0, waitMs));
      });
      socket.on('data', (chunk) => {
        buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
        const end = buffered.indexOf(headerEnd);
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString('latin1');
        const match = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        if (match === null) {
          // Only Content-Length framing is expected from a JSON API; anything else is an error.
          counts.socketErrors++;
          socket.destroy();
          return;
        }
        const total = end + 4 + Number(match[1]);
        if (buffered.length < total) return;
        const doneAt = nowNs();
        const status = Number(head.slice(9, 12));
        buffered = buffered.subarray(total);
        counts.requests++;
        if (status >= 200 && status < 300) latenciesNs.push(Number(doneAt - sentAt));
        else counts.non2xx++;
        schedule();
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearTimeout(timer);
        if (stopping) return resolve();
        // A connection the server dropped or refused counts once, then the client reconnects.
        counts.socketErrors++;
        setTimeout(connect, 10);
      });
    };
    connect();
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, rank)] / 1e6;
}

let started = nowNs();
const done = Promise.all(Array.from({ length: clients }, (_, i) => runClient(i, started)));
process.on('SIGUSR1', () => {
  // A request in flight now is counted when answered, with its full latency.
  latenciesNs.length = 0;
  counts.requests = 0;
  counts.non2xx = 0;
  counts.socketErrors = 0;
  started = nowNs();
});
const stop = () => {
  stopping = true;
};
const durationTimer = setTimeout(stop, durationMs);
// bench/api-during.sh stops the load the moment the daemon finishes its work.
process.once('SIGTERM', stop);
await done;
clearTimeout(durationTimer);
const elapsedS = Number(nowNs() - started) / 1e9;
const sorted = Float64Array.from(latenciesNs).sort();
const round = (v) => (v === null ? null : Math.round(v * 1000) / 1000);
const result = {
  socket: args.socket,
  path: args.path,
  clients,
  mode: rate === undefined ? 'saturated' : 'paced',
  rate_per_client: rate ?? null,
  duration_s: round(elapsedS),
  requests: counts.requests,
  ok: latenciesNs.length,
  errors: counts.non2xx + counts.socketErrors,
  non2xx: counts.non2xx,
  socket_errors: counts.socketErrors,
  req_per_s: round(latenciesNs.length / elapsedS),
  p50_ms: round(percentile(sorted, 50)),
  p99_ms: round(percentile(sorted, 99)),
  max_ms: round(sorted.length === 0 ? null : sorted[sorted.length - 1] / 1e6),
};
if (args.latencies !== undefined) {
  await writeFile(args.latencies, Array.from(sorted, (ns) => `${ns / 1e6}\n`).join(''));
}
if (args.json) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  process.stdout.write(
    `${result.mode} ${clients} clients${rate === undefined ? '' : ` x ${rate}/s`}: ` +
      `${result.req_per_s} req/s, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms, max ${result.max_ms} ms, ` +
      `${result.requests} requests, ${result.non2xx} non-2xx, ${result.socket_errors} socket errors\n`,
  );
}
