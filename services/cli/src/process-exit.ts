import { readFile } from 'node:fs/promises';
import { pollUntil } from '@aks-flex-node/fs';
import { errnoCode } from '@aks-flex-node/log';

/**
 * Whether process `pid` has ended: no `/proc/<pid>` entry, or a zombie its
 * parent has not reaped yet (a daemon a shell started in the background
 * stays one until the shell waits for it, yet it runs no more code).
 */
export async function hasExited(pid: number): Promise<boolean> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    // ESRCH: it ended between the open and the read.
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ESRCH') return true;
    throw error;
  }
  // The state follows the command name, which is in parentheses and may hold any character.
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/** Waits up to `timeoutMs` for `pid` to end; whether it did. */
export function waitForExit(pid: number, timeoutMs: number, intervalMs = 50): Promise<boolean> {
  return pollUntil(async () => ((await hasExited(pid)) ? true : undefined), {
    timeoutMs,
    intervalMs,
    timedOut: () => false,
  });
}
