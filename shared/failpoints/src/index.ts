/**
 * Named crash points between the durable steps of multi-step host changes.
 * Inert unless the environment variable AKS_FLEX_NODE_FAILPOINT names one;
 * then the process kills itself with SIGKILL at that point, as a power cut or
 * an OOM kill would. The crash tests iterate over {@link allFailpoints}, so a
 * step added here is a step the tests kill at.
 */
export const failpoints = {
  // AgentUpgrade staging and switching (daemon, under the activation lock).
  upgradeSignalWritten: 'upgrade/signal-written',
  upgradeCandidateRecorded: 'upgrade/candidate-recorded',
  upgradeCandidateStaged: 'upgrade/candidate-staged',
  upgradeLastGoodUpdated: 'upgrade/last-good-updated',
  upgradeCandidateInstalled: 'upgrade/candidate-installed',
  upgradeSwitched: 'upgrade/switched',
  upgradeSwitchCommitted: 'upgrade/switch-committed',
  // Judging at the next daemon start.
  judgeFailureRecorded: 'judge/failure-recorded',
  judgeResultWritten: 'judge/result-written',
  // Rollback of files (judge, recover-agent-upgrade, the guard).
  rollbackFailureRecorded: 'rollback/failure-recorded',
  rollbackCurrentRestored: 'rollback/current-restored',
  // Convergence from damage (the daemon's start, the upgrade guard,
  // recover-agent-upgrade, under the activation lock): a corrupt signal is
  // kept under a name that says so, then replaced or removed; a `current`
  // that cannot run is pointed at last-good.
  signalCorruptSetAside: 'converge/signal-corrupt-set-aside',
  signalCorruptReplaced: 'converge/signal-corrupt-replaced',
  currentRepointed: 'converge/current-repointed',
  // A config that is not JSON (a torn write) is kept under a name that says
  // so, then the last-good copy is renamed into its place (the daemon's start,
  // under its single-instance guard).
  configCorruptSetAside: 'converge/config-corrupt-set-aside',
  configRestored: 'converge/config-restored',
  // The host-root move (shared/hostroot), pass 1: the daemon runs from the
  // legacy root, under the activation lock. In the order the steps run.
  moveDigestRecorded: 'move/digest-recorded',
  moveStagingCleared: 'move/staging-cleared',
  moveStagingCopied: 'move/staging-copied',
  moveStagingMarked: 'move/staging-marked',
  moveStagingSynced: 'move/staging-synced',
  moveLinkRemoved: 'move/link-removed',
  moveCopyRenamed: 'move/copy-renamed',
  moveRootSynced: 'move/root-synced',
  moveRootPrepared: 'move/root-prepared',
  moveCopyVerified: 'move/copy-verified',
  moveUnitsRewritten: 'move/units-rewritten',
  moveRestartQueued: 'move/restart-queued',
  // Pass 2: the restarted daemon, running from the copy.
  moveFinishUnitsRewritten: 'move/finish-units-rewritten',
  moveLegacyFileRemoved: 'move/legacy-file-removed',
  moveLegacyDirsRemoved: 'move/legacy-dirs-removed',
  moveLegacySynced: 'move/legacy-synced',
  moveRecordRemoved: 'move/record-removed',
  moveMarkerRemoved: 'move/marker-removed',
  // The undo, when the copy cannot run: the host goes back to being linked.
  moveUndoUnitsPointedBack: 'move/undo-units-pointed-back',
  moveUndoStagingCleared: 'move/undo-staging-cleared',
  moveUndoRootSetAside: 'move/undo-root-set-aside',
  moveUndoRelinked: 'move/undo-relinked',
  moveUndoCopyRemoved: 'move/undo-copy-removed',
  // The nspawn lifecycle helper made a hard link to the running executable
  // (the daemon's start, and the move's unit rewrite): the link exists under
  // its temporary name, then it is renamed over the helper.
  helperLinked: 'helper/linked',
  helperRenamed: 'helper/renamed',
  // Inside the download and the extraction: a kill here leaves temporary files
  // (the partial archive, the partial member) that the next start sweeps.
  upgradeDownloading: 'upgrade/downloading',
  upgradeExtracting: 'upgrade/extracting',
} as const;

export type FailpointName = (typeof failpoints)[keyof typeof failpoints];

/** Every failpoint, for tests that kill the process at each one. */
export const allFailpoints: readonly FailpointName[] = Object.values(failpoints);

/** The host-root move's failpoints (`move/…`), for its crash test; the others belong to AgentUpgrade. */
export const moveFailpoints: readonly FailpointName[] = allFailpoints.filter((name) =>
  name.startsWith('move/'),
);

/** The failpoints of convergence from damage (`converge/…`), for their kill test. */
export const convergeFailpoints: readonly FailpointName[] = allFailpoints.filter((name) =>
  name.startsWith('converge/'),
);

/** The helper link's failpoints (`helper/…`), for its crash test. */
export const helperFailpoints: readonly FailpointName[] = allFailpoints.filter((name) =>
  name.startsWith('helper/'),
);

/** The environment variable that arms one failpoint (or several, comma-separated). */
export const failpointEnv = 'AKS_FLEX_NODE_FAILPOINT';

/** Kills this process here if the environment arms this failpoint; otherwise does nothing. */
export function failpoint(name: FailpointName): void {
  const armed = process.env[failpointEnv];
  if (armed === undefined || armed === '') return;
  if (!armed.split(',').includes(name)) return;
  process.stderr.write(`failpoint ${name}: killing the process\n`);
  process.kill(process.pid, 'SIGKILL');
}
