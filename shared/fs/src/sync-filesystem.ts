import { stat } from 'node:fs/promises';
import { AgentError, messageOf } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';
import { runCommand } from './run-command.js';

/** A sync of one filesystem that takes longer than this is a hung disk, not a slow one. */
const syncTimeoutMs = 120_000;

/**
 * Flushes the whole filesystem holding `target` (syncfs(2)). Node has no
 * syncfs binding, so this runs coreutils' `sync -f <path>`, which every
 * supported host has (Azure Container Linux included). Used where an order of
 * removals on one filesystem must be durable before a change on another.
 */
export async function syncFilesystem(target: string): Promise<void> {
  // stat first, so a missing path fails with its errno rather than sync's text.
  try {
    await stat(target);
  } catch (error) {
    throw makeIoError('sync the filesystem of', target, error);
  }
  let detail: string | undefined;
  let cause: unknown;
  try {
    const result = await runCommand('sync', ['-f', target], syncTimeoutMs);
    if (result.exitCode !== 0) {
      detail = result.stderr.trim() === '' ? `exit code ${result.exitCode}` : result.stderr.trim();
    }
  } catch (error) {
    detail = messageOf(error);
    cause = error;
  }
  if (detail !== undefined) {
    throw new AgentError('HOST_ROOT_IO', `sync the filesystem of ${target}: ${detail}`, {
      path: target,
      cause,
      hint: 'check that coreutils `sync` is on PATH and the filesystem is healthy (dmesg)',
    });
  }
}

/** Options for {@link syncFilesystems}. */
export interface SyncFilesystemsOptions {
  /** Syncs one filesystem; defaults to {@link syncFilesystem}. Tests count calls. */
  syncOne?: (target: string) => Promise<void>;
}

/**
 * Flushes each distinct filesystem holding one of `targets` once: paths on the
 * same device (by `st_dev`) share one sync. Every path is checked to exist
 * before any filesystem is synced.
 */
export async function syncFilesystems(
  targets: readonly string[],
  options: SyncFilesystemsOptions = {},
): Promise<void> {
  const syncOne = options.syncOne ?? syncFilesystem;
  const byDevice = new Map<number, string>();
  for (const target of targets) {
    let device: number;
    try {
      device = (await stat(target)).dev;
    } catch (error) {
      throw makeIoError('sync the filesystem of', target, error);
    }
    if (!byDevice.has(device)) byDevice.set(device, target);
  }
  for (const target of byDevice.values()) await syncOne(target);
}
