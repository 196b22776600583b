import { link } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';
import { syncDirectory } from './sync-directory.js';

/**
 * Keeps a damaged file's bytes under `<file>.corrupt-<UTC stamp>[-N]`: a hard
 * link made before anything replaces the file, with its directory synced, so a
 * kill at any later step loses nothing and the next reader sets it aside again.
 * Returns the name. The corrupt signal and the torn config both go through here.
 */
export async function linkAside(file: string, now: Date): Promise<string> {
  const stamp = corruptStampOf(now);
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const name = `${file}.corrupt-${stamp}${attempt === 0 ? '' : `-${attempt}`}`;
    try {
      await link(file, name);
      await syncDirectory(path.dirname(file));
      return name;
    } catch (error) {
      if (errnoCode(error) === 'EEXIST') continue;
      // EPERM from link(2) as root is most often an immutable or append-only
      // file (chattr +i/+a), which a filesystem repair or a hand may leave.
      const hint =
        errnoCode(error) === 'EPERM'
          ? `see \`lsattr ${file}\`; if it is immutable, run \`chattr -i ${file}\` and the agent sets it aside at its next start`
          : undefined;
      throw makeIoError('set aside', file, error, hint === undefined ? {} : { hint });
    }
  }
  throw makeIoError('set aside', file, new Error('no free .corrupt-* name after 100 tries'));
}

/** `20261203T143000Z`: the UTC time in a set-aside name, without characters a shell quotes. */
export function corruptStampOf(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}
