import { lstat, realpath, stat } from 'node:fs/promises';
import { makeIoError } from '@aks-flex-node/fs';
import { errnoCode } from '@aks-flex-node/log';

/**
 * What a layout link (`current`, `last-good`) names, as systemd would find
 * it when it runs the link: the one reader of the links' state, so the
 * daemon's start, the upgrade guard and `recover-agent-upgrade` agree on
 * what "runnable" means. The recovery shim checks the same in shell
 * (`-f`, `-x`, `-s` on the resolved target).
 */
export type AgentLinkState =
  | { kind: 'missing' }
  | { kind: 'dangling' }
  | { kind: 'directory'; target: string }
  | { kind: 'empty'; target: string }
  | { kind: 'not-executable'; target: string }
  | { kind: 'not-a-file'; target: string }
  | { kind: 'runnable'; target: string };

/** Reads what `link` names. Throws HOST_ROOT_IO for anything but a missing path. */
export async function inspectAgentLink(link: string): Promise<AgentLinkState> {
  try {
    await lstat(link);
  } catch (error) {
    if (isMissing(error)) return { kind: 'missing' };
    throw makeIoError('inspect', link, error);
  }
  let target: string;
  try {
    target = await realpath(link);
  } catch (error) {
    if (isMissing(error)) return { kind: 'dangling' };
    throw makeIoError('resolve', link, error);
  }
  const info = await stat(target).catch((error: unknown) => {
    throw makeIoError('inspect', target, error);
  });
  if (info.isDirectory()) return { kind: 'directory', target };
  if (!info.isFile()) return { kind: 'not-a-file', target };
  // execve refuses a file without an execute bit (EACCES) and an empty one
  // (ENOEXEC): systemd reports either as 203/EXEC and restarts in vain.
  if ((info.mode & 0o111) === 0) return { kind: 'not-executable', target };
  if (info.size === 0) return { kind: 'empty', target };
  return { kind: 'runnable', target };
}

/** The state in words for logs and `status`: "dangling", "a directory /x", "an empty file /x". */
export function describeAgentLink(state: AgentLinkState): string {
  switch (state.kind) {
    case 'missing':
      return 'missing';
    case 'dangling':
      return 'dangling (its target does not exist)';
    case 'directory':
      return `a directory ${state.target}`;
    case 'empty':
      return `an empty file ${state.target}`;
    case 'not-executable':
      return `a file without an execute bit ${state.target}`;
    case 'not-a-file':
      return `not a regular file: ${state.target}`;
    case 'runnable':
      return `the runnable binary ${state.target}`;
    default: {
      const unknown: never = state;
      return `unknown (${JSON.stringify(unknown)})`;
    }
  }
}

function isMissing(error: unknown): boolean {
  const code = errnoCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP';
}
