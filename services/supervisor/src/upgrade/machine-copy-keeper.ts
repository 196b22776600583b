import {
  agentBinaryPathsUnder,
  findActiveMachine,
  nspawnCopyPath,
  readUpgradeSignal,
  resolveIfPresent,
  syncNspawnCopy,
} from '@aks-flex-node/agentbinary';
import type { MachineCopyStatus } from '@aks-flex-node/api';
import { resolveHostRoot } from '@aks-flex-node/hostroot';
import type { HostPaths, NspawnMachine } from '@aks-flex-node/layout';
import { isAgentError, messageOf, type Logger } from '@aks-flex-node/log';
import type { MutationQueue } from '../mutation-queue.js';

/** The first wait after a failed sync of the machine's copy; each failure doubles it. */
export const machineCopyRetryInitialMs = 5_000;
/** The longest wait between two attempts. */
export const machineCopyRetryMaxMs = 300_000;

/** What the keeper needs. */
export interface MachineCopyKeeperDeps {
  paths: HostPaths;
  log: Logger;
  queue: Pick<MutationQueue, 'run'>;
  /** Whether `copy` holds the bytes of `source`; production asks the digest cache, so a restart reads neither. */
  isCopyOf: (copy: string, source: string) => Promise<boolean>;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  now: () => Date;
  initialMs?: number;
  maxMs?: number;
}

/**
 * Keeps the active nspawn machine's copy of the agent equal to `current`
 * (spec agentbinary 1.2: the kubelet's exec-credential helper). The host's
 * links are the agent and the copy is secondary: an upgrade or rollback that
 * could not write it finishes without it, and the keeper syncs it afterwards
 * (at every start, and after a failed upgrade), retrying with a growing wait
 * while it cannot, and saying in `status` why and what repairs it.
 */
export interface MachineCopyKeeper {
  /** Starts keeping the copy, unless a loop already does; `machine` when known (the signal named it). */
  keep(machine?: NspawnMachine): void;
  /** Why the copy differs from `current`, while it does; one object per state, for the status serializer. */
  view(): MachineCopyStatus | undefined;
  /** Ends the retries and waits for an attempt under way. */
  stop(): Promise<void>;
}

export function createMachineCopyKeeper(deps: MachineCopyKeeperDeps): MachineCopyKeeper {
  const { log } = deps;
  const stopped = new AbortController();
  let running: Promise<void> | undefined;
  let problem: MachineCopyStatus | undefined;
  let hint: NspawnMachine | undefined;

  /**
   * What the copy should be: the active machine and current, or undefined
   * when there is nothing to keep (a pending upgrade owns the copy: it syncs
   * it after the switch, and its judgement compares it).
   */
  const target = async () => {
    if ((await readUpgradeSignal(deps.paths.signalFile)) !== undefined) return undefined;
    const layout = agentBinaryPathsUnder(await resolveHostRoot(deps.paths), deps.paths.machinesDir);
    const current = await resolveIfPresent(layout.current);
    if (current === undefined) return undefined;
    const machine =
      hint ?? (await findActiveMachine(layout.machinesDir, current, [layout.blue, layout.green]));
    if (machine === undefined) return undefined;
    return { machinesDir: layout.machinesDir, machine, current };
  };

  /** True when nothing is left to do. The comparison runs without the lock, so an upgrade is never refused for it. */
  const attempt = async (): Promise<boolean> => {
    const seen = await target();
    if (seen === undefined) return true;
    const copy = nspawnCopyPath(seen.machinesDir, seen.machine);
    // A copy that cannot be read (missing) differs: the sync below reports what fails there.
    if (await deps.isCopyOf(copy, seen.current).catch(() => false)) return true;
    return deps.queue.run("syncing the nspawn machine's copy of the agent", async () => {
      // Again under the lock: an upgrade may have begun or ended since.
      const now = await target();
      if (now === undefined) return true;
      try {
        await syncNspawnCopy(now.machinesDir, now.machine, now.current, log);
        return true;
      } catch (error) {
        problem = Object.freeze({
          machine: now.machine,
          path: nspawnCopyPath(now.machinesDir, now.machine),
          error: messageOf(error),
          repair:
            isAgentError(error) && error.hint !== undefined
              ? error.hint
              : 'the agent retries by itself',
          failedAt: deps.now().toISOString(),
        });
        throw error;
      }
    });
  };

  const loop = async (): Promise<void> => {
    let waitMs = deps.initialMs ?? machineCopyRetryInitialMs;
    while (!stopped.signal.aborted) {
      try {
        if (await attempt()) {
          if (problem !== undefined) log.info({ path: problem.path }, 'synced the machine copy');
          problem = undefined;
          return;
        }
      } catch (error) {
        // Retried, not fatal: the agent runs from the host's links; only the machine's helper is stale.
        log.error(
          { err: error, retryInMs: waitMs },
          "could not sync the nspawn machine's copy of the agent with current; retrying",
        );
      }
      try {
        await deps.sleep(waitMs, stopped.signal);
      } catch {
        return;
      }
      waitMs = Math.min(waitMs * 2, deps.maxMs ?? machineCopyRetryMaxMs);
    }
  };

  return {
    keep: (machine) => {
      if (machine !== undefined) hint = machine;
      if (running !== undefined || stopped.signal.aborted) return;
      running = loop().finally(() => {
        running = undefined;
        hint = undefined;
      });
    },
    view: () => problem,
    stop: async () => {
      stopped.abort();
      await running;
    },
  };
}
