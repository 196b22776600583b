import { randomBytes } from 'node:crypto';
import { open, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { makeIoError } from '@aks-flex-node/fs';
import { checkArchiveDigest } from './check-archive-digest.js';
import { describeDownloadFailure } from './describe-download-failure.js';
import {
  resolveDownloadOptions,
  type DownloadArchiveOptions,
  type ResolvedDownloadOptions,
} from './download-options.js';
import { openLocalArchive } from './open-local-archive.js';
import { openRemoteArchive } from './open-remote-archive.js';
import { watchForStall, type StallWatchdog } from './stall-watchdog.js';
import type { ArchiveSource } from './archive-source.js';
import { writeArchiveChunks, type ArchiveBody } from './write-archive-chunks.js';

/** A downloaded archive; the caller removes `path` once it is extracted. */
export interface DownloadedArchive {
  path: string;
  /** Lowercase hex SHA-256 of the archive as downloaded. */
  sha256: string;
  bytes: number;
}

/**
 * Fetches the archive a parsed {@link ArchiveSource} names (http, https or a
 * local file URL) into `agent-upgrade-<random>.tar.gz` (mode 0600) in
 * `tempDir`, with the size limit, the timeout and the digest check of spec
 * agentbinary §3.3, and fails a download that receives nothing for
 * `stallTimeoutMs`. On every failure the temp file is gone before the error
 * arrives. Throws INVALID_ARGUMENT (options), UPGRADE_REFUSED (redirect,
 * size, digest) or UPGRADE_FAILED (transport, status, timeout, stall, cancel, I/O).
 */
export async function downloadArchive(
  source: ArchiveSource,
  options: DownloadArchiveOptions,
): Promise<DownloadedArchive> {
  const resolved = resolveDownloadOptions(options);
  const timeout = AbortSignal.timeout(resolved.timeoutMs);
  const stall = watchForStall(resolved.stallTimeoutMs);
  const signal = AbortSignal.any(
    resolved.signal === undefined
      ? [timeout, stall.signal]
      : [resolved.signal, timeout, stall.signal],
  );
  const file = path.join(
    resolved.tempDir,
    `agent-upgrade-${randomBytes(8).toString('hex')}.tar.gz`,
  );
  const handle = await createTempArchive(file);
  try {
    const written = await fillTempArchive(source, { handle, file, signal, stall, resolved });
    checkArchiveDigest(source.sha256, written.sha256, source.redactedUrl);
    return { path: file, ...written };
  } catch (error) {
    // Best effort: the error being reported is the one that matters, and the
    // name is random, so a leftover is never read as an archive later.
    await rm(file, { force: true }).catch(() => undefined);
    throw describeDownloadFailure(error, {
      redactedUrl: source.redactedUrl,
      timeout,
      timeoutMs: resolved.timeoutMs,
      stall: stall.signal,
      stallTimeoutMs: resolved.stallTimeoutMs,
      signal: resolved.signal,
    });
  } finally {
    stall.stop();
  }
}

async function createTempArchive(file: string): Promise<FileHandle> {
  try {
    // 'wx' is O_EXCL: a name planted in a shared temp dir is never followed.
    return await open(file, 'wx', 0o600);
  } catch (error) {
    throw makeIoError('create', file, error, {
      code: 'FETCH_FAILED',
      hint: 'check that the download directory exists and is writable',
    });
  }
}

interface TempArchive {
  handle: FileHandle;
  file: string;
  signal: AbortSignal;
  stall: StallWatchdog;
  resolved: ResolvedDownloadOptions;
}

async function fillTempArchive(
  source: ArchiveSource,
  temp: TempArchive,
): Promise<{ sha256: string; bytes: number }> {
  try {
    const body = await openSource(source, temp);
    return await writeArchiveChunks(body, {
      handle: temp.handle,
      file: temp.file,
      maxBytes: temp.resolved.maxBytes,
      signal: temp.signal,
      onProgress: temp.resolved.onProgress,
      onChunk: temp.stall.progress,
      redactedUrl: source.redactedUrl,
    });
  } finally {
    // Closed, not fsynced: the archive is read right after, and after a crash
    // a fresh download follows, so its durability buys nothing.
    await temp.handle.close();
  }
}

function openSource(source: ArchiveSource, temp: TempArchive): Promise<ArchiveBody> {
  return source.url.protocol === 'file:'
    ? openLocalArchive(source.url, temp.resolved.maxBytes)
    : openRemoteArchive(source.url, temp.resolved.maxBytes, temp.signal);
}
