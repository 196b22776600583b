import { Worker } from 'node:worker_threads';
import { makeIoError } from '@aks-flex-node/fs';

/**
 * The worker's code, evaluated (not loaded from a file), so it runs from the
 * single executable as from the workspace. It reads the file in 1 MiB
 * blocks: the 64 KiB of a read stream cost a third more on a 130 MB binary.
 */
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const { openSync, readSync, closeSync } = require('node:fs');
const { createHash } = require('node:crypto');
try {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(workerData, 'r');
  try {
    for (let n; (n = readSync(fd, buffer, 0, buffer.length, null)) > 0; ) hash.update(buffer.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  parentPort.postMessage({ digest: hash.digest('hex') });
} catch (error) {
  parentPort.postMessage({ error: { message: String(error && error.message), code: error && error.code } });
}
`;

type WorkerReply = { digest: string } | { error: { message: string; code?: string } };

/**
 * The lowercase hex SHA-256 of each file, by path, each hashed on a worker
 * thread of its own: the move hashes two 130 MB binaries, which would hold
 * the daemon's event loop (and so its API) for about 0.4 s, and on a
 * two-core host two workers halve the wait. A file that cannot be read
 * rejects with HOST_ROOT_IO naming it, ENOENT kept as the cause's code.
 */
export async function sha256InWorkers(files: Iterable<string>): Promise<Map<string, string>> {
  const unique = [...new Set(files)];
  const digests = await Promise.all(unique.map(sha256InWorker));
  return new Map(unique.map((file, i) => [file, digests[i] as string]));
}

function sha256InWorker(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerSource, { eval: true, workerData: file });
    let settled = false;
    worker.once('message', (reply: WorkerReply) => {
      settled = true;
      if ('digest' in reply) resolve(reply.digest);
      else
        reject(
          makeIoError(
            'read',
            file,
            Object.assign(new Error(reply.error.message), { code: reply.error.code }),
          ),
        );
    });
    worker.once('error', (error) => {
      settled = true;
      reject(makeIoError('read', file, error));
    });
    worker.once('exit', (code) => {
      if (!settled)
        reject(makeIoError('read', file, new Error(`the hashing worker exited with ${code}`)));
    });
  });
}
