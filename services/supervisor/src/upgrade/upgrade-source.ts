import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  hostCandidateTrust,
  openTrustedCandidate,
  type CandidateTrust,
} from '@aks-flex-node/agentbinary';
import type { AgentUpgradeRequest } from '@aks-flex-node/api';
import {
  downloadArchive,
  extractExactMember,
  parseArchiveSource,
  releaseArchiveMember,
  type ArchiveSource,
  type DownloadProgress,
} from '@aks-flex-node/archive';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { cleanPath, installOpenFile } from '@aks-flex-node/fs';
import { AgentError } from '@aks-flex-node/log';

// An upgrade's source, from the request to the candidate file: parsed and
// checked at the door, then fetched by the one fetcher. The only place the
// two kinds of source (a release archive, a binary on the host) differ.

/**
 * Where an upgrade's candidate comes from, after validation: a release
 * archive at a URL, or a binary already on the host (`agent-upgrade
 * --candidate` hands over its private snapshot). Both are staged, checked,
 * switched and judged the same way; only fetching differs.
 */
export type UpgradeSource =
  | { kind: 'archive'; archive: ArchiveSource; redactedUrl: string }
  | { kind: 'binary'; binaryPath: string; redactedUrl: string };

/**
 * Validates a request's source before anything runs. `redactedUrl` (no query
 * or fragment) is the only form logged, stored or returned. The request
 * schema admits exactly one of `url` and `binaryPath`. Throws INVALID_ARGUMENT.
 */
export function parseUpgradeSource(source: AgentUpgradeRequest['source']): UpgradeSource {
  if ('url' in source) {
    const archive = parseArchiveSource(source);
    return { kind: 'archive', archive, redactedUrl: archive.redactedUrl };
  }
  const { binaryPath } = source;
  if (!path.isAbsolute(binaryPath) || cleanPath(binaryPath) !== binaryPath) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `source.binaryPath ${binaryPath} is not an absolute, clean path`,
      { path: binaryPath, hint: 'name the binary by its absolute path' },
    );
  }
  return { kind: 'binary', binaryPath, redactedUrl: pathToFileURL(binaryPath).href };
}

/**
 * Checks at the door what can be checked at once (a named binary exists, is
 * usable, and only root can change it), so a bad source is refused before
 * the request is answered rather than failing in the background. The fetch
 * checks again on the descriptor it copies from. Throws UPGRADE_REFUSED.
 */
export async function precheckUpgradeSource(
  source: UpgradeSource,
  trust: CandidateTrust,
): Promise<void> {
  if (source.kind !== 'binary') return;
  const candidate = await openTrustedCandidate(source.binaryPath, trust);
  await candidate.handle.close();
}

/** What a fetch reports while it runs, and what cancels it. */
export interface FetchEvents {
  onProgress: (progress: DownloadProgress) => void;
  /** Called when the download is done and the binary is being written. */
  onExtracting: () => void;
  /** Cancels it; a download stops at once. */
  signal?: AbortSignal | undefined;
}

/** Makes a source's candidate binary a local file at `target`, atomically. */
export type CandidateFetcher = (
  source: UpgradeSource,
  target: string,
  events: FetchEvents,
) => Promise<void>;

/**
 * Builds the daemon's one fetcher, the only place the two kinds of source
 * differ. A release archive (an http, https or file URL of
 * `aks-flex-node-linux-<amd64|arm64>.tar.gz`, as the Go releases name it) is
 * downloaded into `downloadsDir` and its one member, this architecture's
 * binary, extracted at the target; the archive is removed either way. A
 * binary on the host is opened once, checked through that descriptor
 * (usable, and only root can change it: `trust`), and copied from it
 * (0755); the staged copy is what is then run and switched in. The source
 * stays the caller's (the CLI removes its snapshot when it is done).
 */
export function createCandidateFetcher(
  downloadsDir: string,
  trust: CandidateTrust = hostCandidateTrust,
): CandidateFetcher {
  const member = releaseArchiveMember();
  return async (source, target, events) => {
    switch (source.kind) {
      case 'archive':
        return fetchFromArchive(source.archive, target, { downloadsDir, member, events });
      case 'binary':
        return fetchFromHost(source.binaryPath, target, { trust, events });
      default: {
        const unknown: never = source;
        throw new Error(`unknown upgrade source ${JSON.stringify(unknown)}`);
      }
    }
  };
}

async function fetchFromHost(
  binaryPath: string,
  target: string,
  context: { trust: CandidateTrust; events: FetchEvents },
): Promise<void> {
  const { handle, size } = await openTrustedCandidate(binaryPath, context.trust);
  try {
    context.events.onProgress({ receivedBytes: size, totalBytes: size });
    context.events.onExtracting();
    await installOpenFile(handle, binaryPath, target, { mode: 0o755 });
  } finally {
    await handle.close();
  }
}

async function fetchFromArchive(
  archive: ArchiveSource,
  target: string,
  context: { downloadsDir: string; member: string; events: FetchEvents },
): Promise<void> {
  const { downloadsDir, member, events } = context;
  // Root-only: the archive is code the host will run.
  await mkdir(downloadsDir, { recursive: true, mode: 0o700 });
  const downloaded = await downloadArchive(archive, {
    tempDir: downloadsDir,
    onProgress: (progress) => {
      // Bytes are in the temporary archive: a kill here leaves it for the start-time sweep.
      if (progress.receivedBytes > 0) failpoint(failpoints.upgradeDownloading);
      events.onProgress(progress);
    },
    signal: events.signal,
  });
  try {
    events.onExtracting();
    await extractExactMember(downloaded.path, {
      member,
      targetPath: target,
      onStaged: () => {
        failpoint(failpoints.upgradeExtracting);
      },
    });
  } finally {
    await rm(downloaded.path, { force: true });
  }
}
