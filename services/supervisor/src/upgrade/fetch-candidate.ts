import { mkdir, rm } from 'node:fs/promises';
import {
  downloadArchive,
  extractExactMember,
  releaseArchiveMember,
  type DownloadProgress,
  type ArchiveSource,
} from '@aks-flex-node/archive';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import {
  hostCandidateTrust,
  openTrustedCandidate,
  type CandidateTrust,
} from '@aks-flex-node/agentbinary';
import { installOpenFile } from '@aks-flex-node/fs';
import type { UpgradeSource } from './upgrade-source.js';

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
