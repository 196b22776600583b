import path from 'node:path';
import { AgentError } from '@aks-flex-node/log';
import { requirePositiveInteger } from './require-positive-integer.js';
import type { DownloadProgress } from './throttle-progress.js';

/** The default cap on an archive's size, compressed (spec agentbinary §3.3). */
export const defaultMaxArchiveBytes = 256 * 1024 * 1024;

/** The default bound on a whole download, redirects and body included (Go's client timeout). */
export const defaultDownloadTimeoutMs = 10 * 60 * 1000;

/** How long a download may receive nothing before it fails as stalled. */
export const defaultStallTimeoutMs = 30 * 1000;

/** Options for {@link downloadArchive}. */
export interface DownloadArchiveOptions {
  /** An absolute directory for `agent-upgrade-<random>.tar.gz`. */
  tempDir: string;
  /** Refuse an archive larger than this; default {@link defaultMaxArchiveBytes}. */
  maxBytes?: number | undefined;
  /** Give up after this long; default {@link defaultDownloadTimeoutMs}. */
  timeoutMs?: number | undefined;
  /** Fail when no bytes arrive for this long; default {@link defaultStallTimeoutMs}. */
  stallTimeoutMs?: number | undefined;
  /** Cancels the download; the temp file is removed. */
  signal?: AbortSignal | undefined;
  /** Called about ten times a second while bytes arrive, and once at the end. */
  onProgress?: ((progress: DownloadProgress) => void) | undefined;
}

/** {@link DownloadArchiveOptions} with every default applied. */
export interface ResolvedDownloadOptions {
  tempDir: string;
  maxBytes: number;
  timeoutMs: number;
  stallTimeoutMs: number;
  signal: AbortSignal | undefined;
  onProgress: ((progress: DownloadProgress) => void) | undefined;
}

/** Applies the defaults once and checks each value. Throws INVALID_ARGUMENT. */
export function resolveDownloadOptions(options: DownloadArchiveOptions): ResolvedDownloadOptions {
  if (!path.isAbsolute(options.tempDir)) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `the download directory ${options.tempDir} is not absolute`,
      {
        path: options.tempDir,
        hint: 'pass an absolute directory for the temporary archive',
      },
    );
  }
  return {
    tempDir: options.tempDir,
    maxBytes: requirePositiveInteger('maxBytes', options.maxBytes ?? defaultMaxArchiveBytes),
    timeoutMs: requirePositiveInteger('timeoutMs', options.timeoutMs ?? defaultDownloadTimeoutMs),
    stallTimeoutMs: requirePositiveInteger(
      'stallTimeoutMs',
      options.stallTimeoutMs ?? defaultStallTimeoutMs,
    ),
    signal: options.signal,
    onProgress: options.onProgress,
  };
}
