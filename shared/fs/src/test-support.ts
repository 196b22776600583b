import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/** A fresh temp directory for one test, removed when the test finishes. */
export async function makeTempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'aks-flex-node-fs-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Runs `body` under `mask` and restores the previous umask. The umask is
 * process-wide, which is why vitest.config.ts runs test files in forks (a
 * worker thread may not even set it) and why a test that changes it runs
 * alone within its file (vitest runs a file's tests one after another).
 */
export async function withUmask<T>(mask: number, body: () => Promise<T>): Promise<T> {
  const previous = process.umask(mask);
  try {
    return await body();
  } finally {
    process.umask(previous);
  }
}

/** The permission bits of a mode, for comparing with 0o755 and friends. */
export function permissions(mode: number): number {
  return mode & 0o7777;
}
