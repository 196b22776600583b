/**
 * Whether a sequence of writes fits on the file systems it touches, before
 * any of it is made: the check a caller runs so that a disk found full
 * halfway does not leave its work half done.
 */
import { lstat, stat, statfs } from 'node:fs/promises';
import path from 'node:path';
import { isNotFound } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';

/**
 * One write or removal, in the order it is made: `bytes` added (positive)
 * or freed (negative) in the directory `dir`, which need not exist yet.
 */
export interface SpaceStep {
  dir: string;
  bytes: number;
  what: string;
}

/** The first file system the steps would not fit on. */
export interface SpaceShortfall {
  /** The nearest existing directory of the first step on that file system. */
  dir: string;
  /** The most the steps hold on it at once. */
  neededBytes: number;
  /** Free outside the root reserve (statfs `bavail`). */
  freeBytes: number;
  /** What the steps that add to it write, in order. */
  writes: string[];
}

/**
 * The first file system on which the steps, in order, would at some point
 * hold more than is free outside its root reserve, or undefined when they
 * fit everywhere. The reserve is left alone: a root process could dip into
 * it, but the host's other services need it more.
 *
 * Throws HOST_ROOT_IO when a directory cannot be inspected.
 */
export async function findSpaceShortfall(
  steps: readonly SpaceStep[],
): Promise<SpaceShortfall | undefined> {
  const byDevice = new Map<number, { dir: string; held: number; peak: number; writes: string[] }>();
  for (const step of steps) {
    const { dir, device } = await filesystemOf(step.dir);
    const fs = byDevice.get(device) ?? { dir, held: 0, peak: 0, writes: [] };
    fs.held += step.bytes;
    fs.peak = Math.max(fs.peak, fs.held);
    if (step.bytes > 0) fs.writes.push(step.what);
    byDevice.set(device, fs);
  }
  for (const fs of byDevice.values()) {
    if (fs.peak <= 0) continue;
    const freeBytes = await freeBytesAt(fs.dir);
    if (fs.peak > freeBytes) {
      return { dir: fs.dir, neededBytes: fs.peak, freeBytes, writes: fs.writes };
    }
  }
  return undefined;
}

/**
 * The nearest directory at or above `dir` that exists, and the device of its
 * file system (a directory a later step creates is on its parent's).
 * Throws HOST_ROOT_IO.
 */
export async function filesystemOf(dir: string): Promise<{ dir: string; device: number }> {
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      return { dir: at, device: (await stat(at)).dev };
    } catch (error) {
      if (!isNotFound(error) || at === path.dirname(at)) throw makeIoError('inspect', at, error);
    }
  }
}

/**
 * The bytes a rename over `file` frees: a regular file no other name keeps.
 * Throws HOST_ROOT_IO.
 */
export async function bytesFreedByReplacing(file: string): Promise<number> {
  try {
    const info = await lstat(file);
    return info.isFile() && info.nlink === 1 ? info.size : 0;
  } catch (error) {
    if (isNotFound(error)) return 0;
    throw makeIoError('inspect', file, error);
  }
}

async function freeBytesAt(dir: string): Promise<number> {
  try {
    const info = await statfs(dir);
    return info.bavail * info.bsize;
  } catch (error) {
    throw makeIoError('inspect the free space of', dir, error);
  }
}
