import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { maxCandidateBytes } from '@aks-flex-node/agentbinary';
import type { AgentUpgradeRequest } from '@aks-flex-node/api';
import {
  parseUpgradeSource as parseArchiveSource,
  type UpgradeSource as ArchiveUrl,
} from '@aks-flex-node/archive';
import { cleanPath, makeIoError } from '@aks-flex-node/fs';
import { AgentError } from '@aks-flex-node/log';

/**
 * Where an upgrade's candidate comes from, after validation: a release
 * archive at a URL, or a binary already on the host (`agent-upgrade
 * --candidate` hands over its private snapshot). Both are staged, checked,
 * switched and judged the same way; only fetching differs.
 */
export type UpgradeSource =
  | { kind: 'archive'; archive: ArchiveUrl; redactedUrl: string }
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
 * Checks at the door what can be checked at once (a named binary exists and
 * is usable), so a bad source is refused before the request is answered
 * rather than failing in the background. Throws UPGRADE_REFUSED.
 */
export async function precheckUpgradeSource(source: UpgradeSource): Promise<void> {
  if (source.kind === 'binary') await checkBinaryOnHost(source.binaryPath);
}

/** Refuses a binary that is no regular executable of a plausible size; returns its size. Throws UPGRADE_REFUSED. */
export async function checkBinaryOnHost(binaryPath: string): Promise<number> {
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
