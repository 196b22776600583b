import path from 'node:path';
import { cleanPath } from '@aks-flex-node/fs';
import { AgentError } from '@aks-flex-node/log';
import { requirePositiveInteger } from './require-positive-integer.js';

/** The default cap on the member's size, decompressed (spec agentbinary §3.3). */
export const defaultMaxExtractedBytes = 256 * 1024 * 1024;

/** Options for {@link extractExactMember}. */
export interface ExtractExactMemberOptions {
  /** The one entry name the archive may hold, e.g. `aks-flex-node-linux-amd64`. */
  member: string;
  /** An absolute, clean path; replaced atomically once the archive is valid. */
  targetPath: string;
  /** Refuse a larger member; default {@link defaultMaxExtractedBytes}. */
  maxExtractedBytes?: number | undefined;
  /** The installed file's exact permission bits; default 0755. */
  mode?: number | undefined;
  /** Called once the member is written to its temporary name, before the rename (a crash point). */
  onStaged?: (() => void) | undefined;
}

/** {@link ExtractExactMemberOptions} with every default applied. */
export interface ResolvedExtractOptions {
  member: string;
  targetPath: string;
  maxExtractedBytes: number;
  mode: number;
  onStaged: (() => void) | undefined;
}

/** Applies the defaults once and checks each value. Throws INVALID_ARGUMENT. */
export function resolveExtractOptions(options: ExtractExactMemberOptions): ResolvedExtractOptions {
  const member = options.member.trim();
  const { targetPath } = options;
  if (
    member === '' ||
    member === '.' ||
    member === '..' ||
    member !== path.posix.basename(member)
  ) {
    throw invalidOption(
      'member',
      `the archive member ${JSON.stringify(member)} is not a plain file name`,
    );
  }
  if (!path.isAbsolute(targetPath) || cleanPath(targetPath) !== targetPath) {
    throw invalidOption(
      'targetPath',
      `the extraction target ${targetPath} is not an absolute, clean path`,
    );
  }
  const maxExtractedBytes = requirePositiveInteger(
    'maxExtractedBytes',
    options.maxExtractedBytes ?? defaultMaxExtractedBytes,
  );
  // The decompressed stream is capped at twice this; keep that sum exact.
  if (maxExtractedBytes > Number.MAX_SAFE_INTEGER / 2) {
    throw invalidOption('maxExtractedBytes', `maxExtractedBytes ${maxExtractedBytes} is too large`);
  }
  const mode = options.mode ?? 0o755;
  // Permission bits only: a setuid or sticky agent binary is never wanted.
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) {
    throw invalidOption('mode', `the mode ${mode.toString(8)} is not permission bits (0 to 0777)`);
  }
  return { member, targetPath, maxExtractedBytes, mode, onStaged: options.onStaged };
}

function invalidOption(name: string, message: string): AgentError {
  return new AgentError('INVALID_ARGUMENT', message, {
    path: name,
    hint: `fix ${name} in the extraction options`,
  });
}
