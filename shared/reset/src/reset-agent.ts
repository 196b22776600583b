import path from 'node:path';
import { exists, removeOwned } from '@aks-flex-node/fs';
import { isLegacyReleased, removeLegacySeed } from '@aks-flex-node/hostroot';
import { unitNames, type HostPaths } from '@aks-flex-node/layout';
import { AgentError, errnoCode, messageOf, type Logger } from '@aks-flex-node/log';
import { cleanUpNodeNetwork } from './clean-up-node-network.js';
import { findKeptBinary } from './find-kept-binary.js';
import type { NetworkEffects } from './network-effects.js';
import { removeMachines, stopMachines } from './nspawn-machines.js';
import { readOnlyRemovalHint } from './read-only-removal-hint.js';
import type { ResetEffects } from './reset-effects.js';
import { resetTargets, resetUnits } from './reset-targets.js';
import { settleUnfinishedMove } from './settle-unfinished-move.js';
import {
  readUpgradeForReset,
  recordUpgradeEndedByReset,
  refuseUnjudgedUpgrade,
  type UpgradeForReset,
} from './unjudged-upgrade.js';

/** The steps of a reset, in order, as progress events name them. */
export const resetPhases = [
  'cancel-restarts',
  'first-boot-unit',
  'stop-agent',
  'stop-machines',
  'remove-machines',
  'node-network',
  'remove-files',
  'unfinished-move',
  'daemon-reload',
] as const;
export type ResetPhase = (typeof resetPhases)[number];

/**
 * Each step as an operator reads it in `reset`'s progress; the ids above are
 * what the API's events carry, and stay stable for scripts.
 */
export const resetPhaseSentences = {
  'cancel-restarts': 'cancelling the queued restarts of the agent',
  'first-boot-unit': 'removing the first-boot unit',
  'stop-agent': 'stopping the agent',
  'stop-machines': 'stopping the nspawn machines',
  'remove-machines': 'removing the nspawn machines',
  'node-network': "removing the node's network state",
  'remove-files': "removing the agent's units, helpers and upgrade state",
  'unfinished-move': 'cleaning up an unfinished host-root move',
  'daemon-reload': 'reloading systemd',
} as const satisfies Record<ResetPhase, string>;

/** The sentence for a reset's progress event; a phase outside the steps (`accepted`, `done`) as it is. */
export function describeResetPhase(phase: string): string {
  return Object.hasOwn(resetPhaseSentences, phase)
    ? resetPhaseSentences[phase as ResetPhase]
    : phase;
}

/** Options for {@link resetAgent}. */
export interface ResetAgentOptions {
  /** The layout; production passes `hostPaths`, tests a temporary tree. */
  paths: HostPaths;
  /** systemctl, or `undefined` on a host systemd does not run (nothing to stop or reload). */
  effects: ResetEffects | undefined;
  /** `ip` and `nft`; production passes the real ones, which tolerate a host without either. */
  network: NetworkEffects;
  log: Logger;
  /**
   * Units this process runs in (the daemon's own agent unit and socket): they
   * are disabled and their files removed, but not stopped, since a process
   * cannot wait for its own stop. The caller stops them last.
   */
  runningUnits?: readonly string[];
  onPhase?: (phase: ResetPhase) => void;
  /** The clock for the record of an upgrade the reset ends; the wall clock unless given. */
  now?: () => Date;
}

/** What a reset did. */
export interface ResetReport {
  /** Paths that existed and were removed. */
  removed: string[];
  /** The agent binary kept for a rejoin, if one runs. */
  keptBinary: string | undefined;
  /** What reset found but left, each with why (a link named like LocalDNS's that is no dummy, a missing tool). */
  left: string[];
  /** The AgentUpgrade whose signal the reset removed, recording that it ended it. */
  endedUpgrade?: string;
}

/**
 * Resets the agent's installation on this host (spec daemon 8): the units,
 * helpers, recovery script, upgrade signal, digest record and an unfinished
 * move's leftovers go, and so does what the Go agent library left of the
 * node: the nspawn machines (stopped first) with their settings, hooks and
 * root filesystems, LocalDNS, the WireGuard and overlay interfaces, policy
 * routes, WireGuard keys and the legacy bridge CNI. The binaries, the config,
 * `/opt/unbounded` and an operator's link stay. It reads no config or state file but the
 * upgrade signal, so it works on a host whose config is broken, and everything it does is idempotent: a second reset succeeds
 * and changes nothing. The caller holds the activation lock, so no upgrade,
 * move or activation runs meanwhile.
 *
 * Throws ACTIVATION_IN_PROGRESS, changing nothing, while an AgentUpgrade
 * has switched to its candidate and is not judged; SYSTEMD_FAILED when a
 * unit cannot be disabled or stopped (nothing after that step has run),
 * HOST_ROOT_IO when a file cannot be removed, HOST_NETWORK_FAILED when an
 * `ip` or `nft` command fails.
 */
export async function resetAgent(options: ResetAgentOptions): Promise<ResetReport> {
  const { paths, effects, log } = options;
  const running = new Set(options.runningUnits ?? []);
  const phase = (name: ResetPhase) => {
    log.info({ phase: name }, 'reset step');
    options.onPhase?.(name);
  };
  const unitFile = (unit: string) => path.join(paths.unitDir, unit);

  // Before anything changes, and under the caller's lock, so no switch or
  // judgement can come between this check and the sweep: removing the
  // signal of an unjudged candidate would leave it current with nothing to
  // judge or roll it back, and its operation without a record.
  const upgrade = await readUpgradeForReset(paths.signalFile, log);
  refuseUnjudgedUpgrade(upgrade);

  // First, so a restart queued before the lock was taken cannot start a daemon
  // that rewrites the units while they are being removed.
  phase('cancel-restarts');
  await effects?.cancelQueuedRestarts();

  // Before the agent stops, because in the daemon stopping the agent ends the
  // process running this. --now: the oneshot stays active (RemainAfterExit)
  // after its file is gone, and a start after re-provisioning would do nothing.
  // A failed disable keeps the file, so a retry still finds the unit.
  phase('first-boot-unit');
  const removed: string[] = [];
  if (await exists(unitFile(unitNames.bootstrap))) {
    await effects?.disableNow(unitNames.bootstrap);
    await removeOwned(unitFile(unitNames.bootstrap));
    removed.push(unitFile(unitNames.bootstrap));
  }

  phase('stop-agent');
  await stopAgentUnits(options, running);

  // The machines stop before their root filesystems go (they hold mounts in
  // them) and before the network clean-up (their network agent would create
  // the interfaces and rules again).
  phase('stop-machines');
  if (effects !== undefined) await stopMachines(paths, effects);
  phase('remove-machines');
  removed.push(...(await removeMachines(paths)));
  phase('node-network');
  const network = await cleanUpNodeNetwork(options.network, log);
  removed.push(...network.removed);

  // Only now are the paths resolved: with the agent stopped (or, in the
  // daemon, its queue held by this reset) no move can change where they are.
  phase('remove-files');
  const endedUpgrade = await endUpgrade(options, upgrade);
  for (const target of resetTargets(paths)) {
    if (!(await exists(target))) continue;
    await removeOwnedForReset(target);
    removed.push(target);
  }

  phase('unfinished-move');
  removed.push(...(await settleUnfinishedMove(paths, log)));
  // The seed install.sh left in /usr/local/bin, which a daemon started from
  // it keeps while it runs (removeLegacySeed) for its next start, from the
  // host root, to remove. With the agent stopped that start never comes, and
  // the seed would leave the host half in each root; so reset removes it as
  // that start would, once the host root holds the agent. Even when the
  // daemon doing this reset runs from the seed: it ends with the reset, and
  // unlinking a running executable leaves the running process whole.
  if (await isLegacyReleased(paths)) {
    if ((await removeLegacySeed(paths, log, undefined)) === 'removed') {
      removed.push(paths.legacySeed);
    }
  }

  phase('daemon-reload');
  await effects?.daemonReload();

  const keptBinary = await findKeptBinary(paths);
  log.info({ removed, keptBinary, left: network.left }, 'reset finished');
  return {
    removed,
    keptBinary,
    left: network.left,
    ...(endedUpgrade === undefined ? {} : { endedUpgrade }),
  };
}

/**
 * Records the end of the upgrade the signal names, when the reset ends one,
 * before the signal goes: with the agent stopped no daemon can record it any
 * more, and the signal is all that knows the operation. Its id, if any.
 */
async function endUpgrade(
  options: ResetAgentOptions,
  upgrade: UpgradeForReset,
): Promise<string | undefined> {
  if (upgrade.kind !== 'ends') return undefined;
  const now = (options.now ?? (() => new Date()))();
  const record = await recordUpgradeEndedByReset(options.paths.operationsDir, upgrade.signal, now);
  options.log.warn(
    { operation: upgrade.signal.operationName, path: record },
    'the reset ended an AgentUpgrade that no daemon had recorded',
  );
  return upgrade.signal.operationName;
}

/**
 * Disables every agent unit that has a unit file, then stops them all (the
 * guard first: it may be rolling back, and that takes the lock we hold).
 * Units this process runs in are only disabled.
 */
async function stopAgentUnits(options: ResetAgentOptions, running: ReadonlySet<string>) {
  const { effects, paths } = options;
  if (effects === undefined) {
    options.log.warn('systemd does not run this host; no unit to stop, removing files only');
    return;
  }
  const withFiles: string[] = [];
  for (const unit of resetUnits) {
    if (await exists(path.join(paths.unitDir, unit))) withFiles.push(unit);
  }
  // The guard is started by the agent, never enabled; the rest are disabled
  // first so nothing pulls them in again while they stop.
  const enabled = withFiles.filter((unit) => unit !== unitNames.upgradeGuard);
  if (enabled.length > 0) await effects.disable(enabled);
  // One at a time: systemctl gives one status for many units, and a unit it
  // has not loaded must not hide a failure to stop another.
  for (const unit of stopOrder) {
    if (!running.has(unit)) await effects.stop([unit]);
  }
}

/**
 * The guard first (it may be rolling back). Then the socket before the agent:
 * while the socket listens, any connection (a hook, this CLI's own request)
 * starts the agent again, and a daemon starting mid-reset rewrites the units
 * and helpers being removed (spec daemon 8.4, race 3). The agent Requires=
 * its socket, so stopping the socket stops it too; its own stop then finds
 * it stopped, or stops a daemon an earlier release's unit started alone.
 */
const stopOrder: readonly string[] = [
  unitNames.upgradeGuard,
  unitNames.agentSocket,
  unitNames.agent,
  unitNames.recovery,
  unitNames.localDnsNetwork,
];

/**
 * Removes one of reset's files, naming the operator's next step when it
 * cannot: most often a /usr/local made read-only while an earlier release's
 * helpers are still there, or, inside the daemon, a unit sandbox that leaves
 * /usr/local read-only on a host with nothing of the agent there. What came
 * before stays done, and a second reset carries on from here. Throws
 * HOST_ROOT_IO.
 */
async function removeOwnedForReset(target: string): Promise<void> {
  try {
    await removeOwned(target);
  } catch (error) {
    // removeOwned's error keeps the system error as its cause.
    const readOnly = [error, error instanceof Error ? error.cause : undefined].some(
      (e) => errnoCode(e) === 'EROFS',
    );
    throw new AgentError('HOST_ROOT_IO', messageOf(error), {
      path: target,
      cause: error,
      hint: readOnly
        ? await readOnlyRemovalHint(target)
        : `fix what keeps ${target} from being removed, then run \`aks-flex-node reset\` again`,
    });
  }
}
