import path from 'node:path';
import type { UpgradeSignal } from '@aks-flex-node/api';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { corruptStampOf, linkAside, removeOwned, syncDirectory } from '@aks-flex-node/fs';
import type { Logger } from '@aks-flex-node/log';
import { isSlot, type AgentBinaryPaths } from '../agent-binary-paths.js';
import { inspectAgentLink } from '../agent-link.js';
import { readUpgradeSignalState, writeUpgradeSignal } from './upgrade-signal-file.js';

/** What setting a corrupt signal aside did, for the log and `status`. */
export interface CorruptSignalSetAside {
  /** Where the damaged file is kept, for whoever wants to read it. */
  setAsideAs: string;
  reason: string;
  /** The signal written in its place (current is to be judged again), or undefined when none was. */
  rebuilt: UpgradeSignal | undefined;
}

/** What {@link readSettledSignal} needs; the caller holds the activation lock. */
export interface SettleOptions {
  paths: AgentBinaryPaths;
  signalFile: string;
  log: Logger;
  now: () => Date;
  /** Told when a corrupt signal was set aside (the daemon shows it in `status`). */
  onSetAside?: (setAside: CorruptSignalSetAside) => void;
}

/**
 * Reads the signal, setting a corrupt one aside first: the daemon's start,
 * the upgrade guard and `recover-agent-upgrade` all read it through here, so
 * none of them loops on a file no release could have meant. Returns the
 * pending signal (possibly the one rebuilt from the links), or undefined.
 */
export async function readSettledSignal(
  options: SettleOptions,
): Promise<UpgradeSignal | undefined> {
  const state = await readUpgradeSignalState(options.signalFile);
  switch (state.kind) {
    case 'absent':
      return undefined;
    case 'pending':
      return state.signal;
    case 'corrupt': {
      const setAside = await setAsideCorruptSignal(options, state.reason, state.salvagedOperation);
      options.onSetAside?.(setAside);
      return setAside.rebuilt;
    }
    default: {
      const unknown: never = state;
      throw new Error(`unknown signal state ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * Keeps the corrupt file under `<signal>.corrupt-<UTC time>`, then puts in
 * its place what the links say. Every prefix converges: the copy is a hard
 * link made before the signal changes, so a kill between the two steps
 * leaves the corrupt signal where it was, and the next reader sets it aside
 * again (one more copy, nothing lost).
 *
 * What replaces it (docs/upgrades.md, "A corrupt signal"): when `current`
 * runs a slot other than last-good, nothing tells whether that slot was
 * ever judged, so it is judged again: the rebuilt signal names it as a
 * switched candidate. A current that starts and stays up is kept (a host
 * whose switch never happened is never downgraded); one that cannot start
 * is rolled back by the guard or the recovery unit. Otherwise the signal
 * is removed: there is nothing to judge.
 */
async function setAsideCorruptSignal(
  options: SettleOptions,
  reason: string,
  salvagedOperation: string | undefined,
): Promise<CorruptSignalSetAside> {
  const { signalFile, log } = options;
  const now = options.now();
  const setAsideAs = await linkAside(signalFile, now);
  failpoint(failpoints.signalCorruptSetAside);
  const rebuilt = await rebuildFromLinks(options.paths, {
    operationName: salvagedOperation ?? `corrupt-signal-${corruptStampOf(now)}`,
    startedAt: now.toISOString(),
    corruptSignal: `${reason}; set aside as ${setAsideAs}`,
  });
  if (rebuilt === undefined) await removeOwned(signalFile);
  else await writeUpgradeSignal(signalFile, rebuilt);
  await syncDirectory(path.dirname(signalFile));
  failpoint(failpoints.signalCorruptReplaced);
  log.warn(
    {
      path: signalFile,
      setAsideAs,
      reason,
      ...(rebuilt === undefined ? {} : { judgedAgain: rebuilt.candidatePath }),
    },
    rebuilt === undefined
      ? 'set a corrupt AgentUpgrade signal aside; no upgrade is pending'
      : 'set a corrupt AgentUpgrade signal aside; the current binary is judged again',
  );
  return { setAsideAs, reason, rebuilt };
}

/** What `status` says once a corrupt signal was set aside. */
export function describeSetAside(setAside: CorruptSignalSetAside): string {
  const what =
    setAside.rebuilt === undefined
      ? 'no AgentUpgrade was pending'
      : `the current binary ${setAside.rebuilt.candidatePath ?? ''} is judged again`;
  return `set a corrupt AgentUpgrade signal aside as ${setAside.setAsideAs} (${setAside.reason}); ${what}`;
}

/** The signal that judges `current` again, or undefined when there is nothing to judge. */
async function rebuildFromLinks(
  paths: AgentBinaryPaths,
  fields: Pick<UpgradeSignal, 'operationName' | 'startedAt' | 'corruptSignal'>,
): Promise<UpgradeSignal | undefined> {
  const current = await inspectAgentLink(paths.current);
  const lastGood = await inspectAgentLink(paths.lastGood);
  // Only a runnable slot other than a runnable last-good can be an unjudged
  // candidate with somewhere to roll back to; a current that cannot run is
  // repointed at last-good by the caller instead.
  if (current.kind !== 'runnable' || lastGood.kind !== 'runnable') return undefined;
  if (current.target === lastGood.target || !isSlot(paths, current.target)) return undefined;
  return {
    ...fields,
    candidatePath: current.target,
    previousPath: lastGood.target,
    switchCommitted: true,
  };
}
