import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/** A fresh temp directory for one test, removed when the test finishes. */
export async function makeTempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'aks-flex-node-archive-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The permission bits of a mode, for comparing with 0o755 and friends. */
export function permissions(mode: number): number {
  return mode & 0o7777;
}

/** What a test asserts is unchanged after a refusal: a file's bytes and mode, and its directory's names. */
export interface FileSnapshot {
  content: string;
  mode: number;
  siblings: string[];
}

/** Reads a {@link FileSnapshot} of `file`. */
export async function snapshotFile(file: string): Promise<FileSnapshot> {
  return {
    content: await readFile(file, 'base64'),
    mode: permissions((await stat(file)).mode),
    siblings: (await readdir(path.dirname(file))).sort(),
  };
}
