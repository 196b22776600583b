import { mkdir, rm } from 'node:fs/promises';
import {
  downloadArchive,
  extractExactMember,
  parseUpgradeSource,
  releaseArchiveMember,
  type UpgradeSource,
} from '@aks-flex-node/archive';
import type { ArchiveSource } from '@aks-flex-node/api';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import type { ArchiveHandler } from './archive-handler.js';

/**
 * Release archives as the daemon takes them: an http, https or file URL of
 * `aks-flex-node-linux-<amd64|arm64>.tar.gz` (as the Go releases name it) whose one member is this
 * architecture's binary. Downloads go to a directory of the daemon's own.
 */
export function createReleaseArchives(
  tempDir: string,
): ArchiveHandler<UpgradeSource, ArchiveSource> {
  const member = releaseArchiveMember();
  return {
    parse: (source) => parseUpgradeSource(source),
    fetch: async (source, onProgress, signal) => {
      // Root-only: the archive is code the host will run.
      await mkdir(tempDir, { recursive: true, mode: 0o700 });
      const downloaded = await downloadArchive(source, {
        tempDir,
        onProgress: (progress) => {
          // Bytes are in the temporary archive: a kill here leaves it for the start-time sweep.
          if (progress.receivedBytes > 0) failpoint(failpoints.upgradeDownloading);
          onProgress(progress);
        },
        signal,
      });
      return { archivePath: downloaded.path, cleanup: () => rm(downloaded.path, { force: true }) };
    },
    install: (_source, archivePath, slot) =>
      extractExactMember(archivePath, {
        member,
        targetPath: slot,
        onStaged: () => {
          failpoint(failpoints.upgradeExtracting);
        },
      }),
  };
}
