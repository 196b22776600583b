import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openTrustedCandidate, type CandidateTrust } from '@aks-flex-node/agentbinary';
import type { AgentUpgradeRequest } from '@aks-flex-node/api';
import { parseArchiveSource, type ArchiveSource } from '@aks-flex-node/archive';
import { cleanPath } from '@aks-flex-node/fs';
import { AgentError } from '@aks-flex-node/log';

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
