import { chmod, lstat, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { AgentError, errnoCode } from '@aks-flex-node/log';
import { isNotFound } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';

/**
 * Creates `dir` and each missing parent with exactly `mode`, whatever the
 * umask (spec hostroot §3.8). Anything that already exists at a name, in any
 * form, is accepted and left exactly as it is: an existing directory keeps
 * the mode its owner chose, which matters for `/opt/unbounded`, the host's.
 */
export async function mkdirMode(dir: string, mode: number): Promise<void> {
  // stat follows links on purpose: a link an operator made to an existing
  // directory is a directory for this purpose.
  try {
    await stat(dir);
    return;
  } catch (error) {
    if (!isNotFound(error)) throw makeIoError('inspect', dir, error);
  }
  const parent = path.dirname(dir);
  if (parent !== dir) await mkdirMode(parent, mode);
  try {
    await mkdir(dir, { mode });
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw makeIoError('create', dir, error);
    await acceptAppearedDirectory(dir);
    return;
  }
  // mkdir applied the umask; chmod is what makes the mode exact, so a umask
  // of 077 cannot leave the agent's directories untraversable.
  try {
    await chmod(dir, mode);
  } catch (error) {
    throw makeIoError('set mode of', dir, error);
  }
}

/**
 * The name appeared between stat and mkdir (a concurrent creator), or it is a
 * dangling link, which stat reports as missing. Only a real directory is
 * accepted, with its creator's mode: a link appearing in that window is never
 * followed, so nobody can redirect what is created next.
 */
async function acceptAppearedDirectory(dir: string): Promise<void> {
  let info;
  try {
    info = await lstat(dir);
  } catch (error) {
    throw makeIoError('inspect', dir, error);
  }
  if (!info.isDirectory()) {
    throw new AgentError(
      'HOST_ROOT_IO',
      `${dir} appeared while it was being created, and is not a directory`,
      { path: dir, hint: `remove ${dir} if nothing uses it, then retry` },
    );
  }
}
