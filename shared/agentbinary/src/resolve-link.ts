import { readlink, realpath } from 'node:fs/promises';
import { errnoCode } from '@aks-flex-node/log';
import { makeIoError } from '@aks-flex-node/fs';

/**
 * Resolves a path fully, or returns undefined when it (or what a link names)
 * does not exist: a dangling link counts as missing. Other errors are thrown
 * with the path, because guessing there could pick the wrong binary.
 */
export async function resolveIfPresent(target: string): Promise<string | undefined> {
  try {
    return await realpath(target);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw makeIoError('resolve', target, error);
  }
}

/** Whether `link` is a symlink whose text is exactly `target` (no resolving: the text is what is compared). */
export async function isLinkTo(link: string, target: string): Promise<boolean> {
  try {
    return (await readlink(link)) === target;
  } catch {
    // Not a link (EINVAL) or missing: either way it is not the link we want.
    return false;
  }
}
