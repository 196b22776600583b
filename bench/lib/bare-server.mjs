#!/usr/bin/env node
// The baseline for the daemon's API throughput: a bare node:http server on a
// Unix socket answering every request with exactly the bytes in FILE (what
// the daemon's /v1/status returned) and the daemon's content type, so a
// ratio against it measures what fastify, zod, pino and the handler add.
// Usage: node bench/lib/bare-server.mjs --body FILE --socket PATH
import { readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: { body: { type: 'string' }, socket: { type: 'string' } },
});
if (args.body === undefined || args.socket === undefined) {
  process.stderr.write('usage: bare-server.mjs --body FILE --socket PATH\n');
  process.exit(2);
}
const body = readFileSync(args.body);
const headers = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': String(body.length),
};
const server = http.createServer((_request, response) => {
  response.writeHead(200, headers);
  response.end(body);
});
rmSync(args.socket, { force: true });
server.listen(args.socket, () => process.stdout.write(`bare server listening on ${args.socket}\n`));
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
