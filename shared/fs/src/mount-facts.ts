import { readFile, realpath } from 'node:fs/promises';
import { AgentError } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';
import { parseMountinfo, type MountEntry } from './parse-mountinfo.js';

/** What the mount holding a path says about it. */
export interface MountFacts {
  readonly mountPoint: string;
  /** Read-only through the mount or through its superblock. */
  readonly readOnly: boolean;
  /** Mounted noexec: binaries placed there cannot run. */
  readonly noexec: boolean;
  readonly fsType: string;
}

/** Options for {@link mountFacts}. */
export interface MountFactsOptions {
  /** mountinfo text to use instead of reading `/proc/self/mountinfo`. */
  mountinfo?: string;
}

/**
 * Describes the mount holding `target`. Node's `statfs` exposes no mount
 * flags, so this reads `/proc/self/mountinfo` and takes the mount whose mount
 * point is the longest prefix of the resolved path at a component boundary;
 * among equal mount points the last line wins, because a later mount on the
 * same point hides the earlier one.
 */
export async function mountFacts(
  target: string,
  options: MountFactsOptions = {},
): Promise<MountFacts> {
  let resolved: string;
  let text: string;
  try {
    resolved = await realpath(target);
    text = options.mountinfo ?? (await readFile('/proc/self/mountinfo', 'utf8'));
  } catch (error) {
    throw makeIoError('inspect the filesystem of', target, error);
  }
  const mount = findHoldingMount(parseMountinfo(text), resolved);
  if (mount === undefined) {
    throw new AgentError(
      'HOST_ROOT_IO',
      `inspect the filesystem of ${target}: no mount in mountinfo holds ${resolved}`,
      { path: target, hint: 'check that /proc is mounted' },
    );
  }
  return {
    mountPoint: mount.mountPoint,
    readOnly: mount.mountOptions.includes('ro') || mount.superOptions.includes('ro'),
    noexec: mount.mountOptions.includes('noexec'),
    fsType: mount.fsType,
  };
}

function findHoldingMount(
  entries: readonly MountEntry[],
  resolved: string,
): MountEntry | undefined {
  let best: MountEntry | undefined;
  for (const entry of entries) {
    if (!holds(entry.mountPoint, resolved)) continue;
    // >= so that the last of several mounts on one point wins.
    if (best === undefined || entry.mountPoint.length >= best.mountPoint.length) best = entry;
  }
  return best;
}

/** `/usr` holds `/usr/bin` but not `/usrlocal`. */
function holds(mountPoint: string, resolved: string): boolean {
  if (mountPoint === '/' || mountPoint === resolved) return true;
  return resolved.startsWith(`${mountPoint}/`);
}
