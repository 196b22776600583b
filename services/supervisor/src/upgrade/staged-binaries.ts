import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { maxCandidateBytes } from '@aks-flex-node/agentbinary';
import type { BinarySource } from '@aks-flex-node/api';
import { cleanPath, installFile, makeIoError } from '@aks-flex-node/fs';
import { AgentError } from '@aks-flex-node/log';
import type { ArchiveHandler, ParsedSource } from './archive-handler.js';

/** A binary on the host named by `source.binaryPath`, checked. */
export interface StagedBinary extends ParsedSource {
  binaryPath: string;
}

/**
 * Binaries already on the host, as `agent-upgrade --candidate` hands them
 * over: its private snapshot of the candidate. "Fetching" checks the file is
 * a regular executable; "installing" copies it to the stage's name beside
 * the slot (0755). The blue/green staging, the candidate check, the restart
 * and the judging are the same as for a release archive.
 */
export function createStagedBinaries(): ArchiveHandler<StagedBinary, BinarySource> {
  return {
    parse: (source) => {
      const binaryPath = source.binaryPath;
      if (!path.isAbsolute(binaryPath) || cleanPath(binaryPath) !== binaryPath) {
        throw new AgentError(
          'INVALID_ARGUMENT',
          `source.binaryPath ${binaryPath} is not an absolute, clean path`,
          { path: binaryPath, hint: 'name the binary by its absolute path' },
        );
      }
      return { binaryPath, redactedUrl: pathToFileURL(binaryPath).href };
    },
    precheck: async (source) => {
      await checkStagedBinary(source.binaryPath);
    },
    fetch: async (source, onProgress) => {
      const size = await checkStagedBinary(source.binaryPath);
      onProgress({ receivedBytes: size, totalBytes: size });
      // The caller owns the file (the CLI removes its snapshot when it is done).
      return { archivePath: source.binaryPath, cleanup: () => Promise.resolve() };
    },
    install: (_source, binaryPath, target) => installFile(binaryPath, target, { mode: 0o755 }),
  };
}

async function checkStagedBinary(binaryPath: string): Promise<number> {
  const info = await stat(binaryPath).catch((error: unknown) => {
    throw makeIoError('inspect the candidate', binaryPath, error, { code: 'UPGRADE_REFUSED' });
  });
  const why = describeUnusable(info);
  if (why === undefined) return info.size;
  throw new AgentError('UPGRADE_REFUSED', `the candidate ${binaryPath} ${why}`, {
    path: binaryPath,
    hint: `name an aks-flex-node release binary; check it with \`ls -lL ${binaryPath}\``,
  });
}

function describeUnusable(info: Stats): string | undefined {
  if (!info.isFile()) return 'is not a regular file';
  if ((info.mode & 0o111) === 0) return 'has no execute bit';
  if (info.size === 0 || info.size > maxCandidateBytes) {
    return `is ${info.size} bytes, outside 1 to ${maxCandidateBytes}`;
  }
  return undefined;
}
