// The harness API a scenario imports. Machine internals (disks, records,
// nspawn handling, teardown) stay behind it.
export {
  copyReleaseIn,
  readOperationRecords,
  readSlotLinks,
  releaseInHost,
  runAgentUpgrade,
  waitForUpgradeSettled,
} from './agent-upgrade.js';
export type { AgentUpgradeRun, SlotLinks } from './agent-upgrade.js';
export {
  badCandidateFailures,
  badCandidateScript,
  badCandidateVersion,
  packBadCandidate,
} from './bad-candidates.js';
export type { BadCandidate } from './bad-candidates.js';
export { collectDiagnostics } from './diagnostics.js';
export { ensureRootfs } from './ensure-rootfs.js';
export type { MachineCommand, RunOptions } from './enter-machine.js';
export { bootHost } from './host.js';
export type { BootHostOptions, EmptyHost, Host } from './host.js';
export { hostVariants } from './host-variants.js';
export type { HostVariant } from './host-variants.js';
export { writeIgnitionToDisk } from './ignition-disk.js';
export { readJournal, waitForJournal } from './journal.js';
export type { JournalWait } from './journal.js';
export { layOutFixture } from './lay-out-fixture.js';
export type { Fixture, FixtureEntry } from './lay-out-fixture.js';
export { readLayoutTree } from './layout-tree.js';
export { refuseSharedNetwork } from './private-network.js';
export {
  cniNatChains,
  expectRealNodeGone,
  hostOwnNetwork,
  layOutRealNode,
  readRealNodeFacts,
  realNodeMachines,
  realNodeOf,
  startRealNodeMachines,
} from './real-node.js';
export type { RealNode, RealNodeLink, RealNodeOptions } from './real-node.js';
export {
  downloadedBinary,
  installProduct,
  isProductBuilt,
  parseJsonOutput,
  productBinary,
  productSkipMessage,
  readProductStatus,
  runProduct,
} from './product.js';
export { productStatus, waitForProductStatus, waitForStartSequence } from './product-status.js';
export { diagnosedUnits, productPaths, productUnits } from './product-names.js';
export {
  buildSecondRelease,
  createReleaseDir,
  packReleaseArchive,
  readReleaseArchive,
  releaseArch,
  releaseArchiveFile,
  releaseMember,
} from './release-archive.js';
export type { ReleaseArchive } from './release-archive.js';
export { useSecondRelease } from './second-release-suite.js';
export { runOrThrow } from './run-or-throw.js';
export {
  copyScriptsIn,
  expectNothingOfTheAgent,
  expectResetHost,
  resetThroughDaemon,
  installAndStart,
  packGoNamedArchive,
  parentSnapshot,
  runScript,
  stageParent,
} from './scripts-host.js';
export type { CommandResult } from './run-process.js';
export { formatCommandResult } from './run-process.js';
export { describeSelinuxSupport } from './selinux.js';
export { waitForServingDaemon } from './serving-daemon.js';
export type { StatusAnswer, WaitForServingDaemonOptions } from './serving-daemon.js';
export { sweepStaleMachines } from './sweep-stale-machines.js';
export { ctrlC, openTerminal, renderScreen } from './terminal.js';
export type { TerminalResult, TerminalSession } from './terminal.js';
export { readUnitState, waitForUnitState } from './unit-state.js';
export type { UnitActiveState, UnitState, WaitForUnitStateOptions } from './unit-state.js';
export { withHost } from './with-host.js';
export { copyIn, writeHostFile } from './write-host-file.js';
export { readHandOver, startStatusPoller } from './status-poller.js';
export type { HandOver, PolledRequest, StatusPoller } from './status-poller.js';
export { shellPause } from './shell-pause.js';
