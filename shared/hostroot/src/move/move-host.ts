import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { checkBinaryRuns, makeIoError, mountFacts } from '@aks-flex-node/fs';
import { currentLinkFile } from '@aks-flex-node/layout';
import { restoreLabels, type Relabel } from '../restore-labels.js';

/** What the noexec probe says about the filesystem holding a directory. */
export interface MountProbe {
  readonly noexec: boolean;
  /** Where that filesystem is mounted, for the reason an operator reads. */
  readonly mountPoint: string;
}

/**
 * Every effect of the move outside the two roots, as one object so the
 * daemon passes real ones and tests pass fakes (STYLE.md conventions 13).
 * The move calls them in a fixed order; each says when below.
 */
export interface MoveHost {
  /** The running daemon's executable with links resolved (`/proc/self/exe`). */
  executable(): Promise<string>;
  /** Restores SELinux labels under the copied root, before anything runs from it. */
  relabel: Relabel;
  /** Asked once per pass 1, about the root's parent, before anything is copied. */
  probeMount(dir: string): Promise<MountProbe>;
  /**
   * Runs the agent from the copy under `root` and throws when it cannot run
   * there (noexec, SELinux denial, …). Called before any unit names the copy;
   * a failure undoes the move.
   */
  verify(root: string): Promise<void>;
  /**
   * Points the agent unit, recovery unit and script, guard unit, nspawn
   * lifecycle helper and hooks, and the LocalDNS unit at the files under
   * `root`, reloads systemd, and makes it all durable before returning.
   * Installs this release's nspawn helper from the running binary before
   * writing hooks that name it. Runs on every pass (it must be idempotent),
   * and during an undo with the legacy root, to point everything back.
   */
  rewriteUnits(root: string): Promise<void>;
  /**
   * Queues the daemon's restart from the rewritten units (naming the unit in
   * `systemctl reset-failed` first, so the planned restart never trips the
   * start limit). It may only queue: the caller keeps running until replaced.
   */
  queueRestart(): Promise<void>;
}

/** The effects only the daemon can supply; the rest have real defaults here. */
export interface DaemonMoveEffects {
  rewriteUnits: MoveHost['rewriteUnits'];
  queueRestart: MoveHost['queueRestart'];
}

/**
 * The real host: `/proc/self/exe`, `restorecon`, `/proc/self/mountinfo`, and
 * `<root>/lib/aks-flex-node/aks-flex-node-current version` as the proof that
 * the copy runs (the path the agent unit will name). Its verify throws
 * NOT_EXECUTABLE, its probe and executable HOST_ROOT_IO.
 */
export function systemMoveHost(effects: DaemonMoveEffects): MoveHost {
  return {
    executable: resolveRunningExecutable,
    relabel: restoreLabels,
    probeMount: async (dir) => {
      const facts = await mountFacts(dir);
      return { noexec: facts.noexec, mountPoint: facts.mountPoint };
    },
    verify: async (root) => {
      await checkBinaryRuns(path.join(root, currentLinkFile));
    },
    rewriteUnits: effects.rewriteUnits,
    queueRestart: effects.queueRestart,
  };
}

async function resolveRunningExecutable(): Promise<string> {
  try {
    return await realpath('/proc/self/exe');
  } catch (error) {
    throw makeIoError('resolve', '/proc/self/exe', error, {
      object: "(the daemon's executable)",
    });
  }
}
