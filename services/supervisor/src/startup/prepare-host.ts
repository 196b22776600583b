import {
  agentBinaryPathsUnder,
  convergeHostInstall,
  sweepUpgradeLeftovers,
  type Host,
} from '@aks-flex-node/agentbinary';
import { fileDigest, restoreFileDigests, saveFileDigests } from '@aks-flex-node/fs';
import {
  hostRootState,
  loadRecordedDigests,
  recordDigest,
  resolveHostRoot,
} from '@aks-flex-node/hostroot';
import { temporaryFilePlaces, type HostPaths } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import { monotonicMs, recordAgentStart } from '../upgrade/start-limit.js';
import {
  describeConfigRestore,
  restoreConfigFromLastGood,
  type ConfigFiles,
  type StartConfig,
} from './config-last-good.js';
import {
  refreshNspawnLifecycleHelper,
  repairLocalDnsUnit,
  repairNspawnHooks,
} from './refresh-host-assets.js';
import { sweepTemporaryFiles } from './sweep-temporary-files.js';

/** What {@link prepareHost} needs: the daemon's start, as main.ts composed it. */
export interface PrepareHostDeps {
  paths: HostPaths;
  log: Logger;
  host: Host;
  /** Whether systemd runs this daemon as the agent unit (it then owns the units). */
  managedBySystemd: boolean;
  configFiles: ConfigFiles;
  startConfig: StartConfig;
  /** The boot's digest cache (`paths.fileDigestCache`). */
  fileDigestCache: string;
  /** Shown in status until the next start (a restored config). */
  noteProblem: (problem: string) => void;
  /** What this start could not refresh: a pending upgrade's judgement fails on it. */
  noteStartupFailure: (failure: string | undefined) => void;
}

/**
 * The daemon's work on the host once it holds the single-instance guard and
 * before it serves: the config restore, the install converged, leftovers
 * swept, the helper and the LocalDNS unit refreshed, and on a linked host
 * this executable's digest recorded. Resolves with the host root the
 * daemon's paths now name.
 */
export async function prepareHost(deps: PrepareHostDeps): Promise<string> {
  const { paths, log, host, managedBySystemd, configFiles, startConfig, fileDigestCache } = deps;
  const { noteStartupFailure } = deps;
  // First, under the guard: a second daemon refused before it could
  // touch the config. Status shows the restore until the next start.
  if (startConfig.restore !== undefined) {
    const { reason } = startConfig.restore;
    const setAsideAs = await restoreConfigFromLastGood(
      configFiles,
      startConfig.text,
      reason,
      log,
      () => host.wallClock(),
    );
    if (setAsideAs !== undefined) {
      deps.noteProblem(describeConfigRestore(configFiles, setAsideAs, reason));
    }
  }
  // Each start under systemd is one its start limit counts; recorded so a
  // planned restart can be spaced where reset-failed is refused.
  if (managedBySystemd) await recordAgentStart(paths.agentStarts, monotonicMs());
  const executable = await host.runningExecutable();
  // The digests an earlier daemon of this boot took: a restart finds the
  // helper and the executable unchanged by their identity, without reading
  // them (260-390 MB, most of a start's time before this record).
  await restoreFileDigests(fileDigestCache);
  const { executableCopy } = await convergeHostInstall({
    paths,
    log,
    executable,
    ...(managedBySystemd ? { systemctl: host.systemctl } : {}),
  });
  const startupRoot = await resolveHostRoot(paths);
  // Before it serves, and after the install converged (so the slots' directory
  // exists): an earlier daemon killed mid-download or mid-extraction left
  // temporary files nobody else removes, and repeated crashes fill the disk.
  await sweepUpgradeLeftovers(
    {
      slotDir: agentBinaryPathsUnder(paths.root).slotDir,
      downloadsDir: paths.downloadsDir,
      stateDir: paths.stateDir,
    },
    log,
  );
  // Before the helper is refreshed: a stopped install of it leaves its
  // temporary copy (131 MB) beside it, and the refresh writes another.
  await sweepTemporaryFiles({
    paths,
    places: temporaryFilePlaces(paths),
    log,
  });
  // The first start of a binary from elsewhere (another file system) links
  // the helper to the copy it just installed, not a third 131 MB copy.
  noteStartupFailure(await refreshNspawnLifecycleHelper(paths, log, executable, executableCopy));
  // Nothing from here to the start sequence changes the root's state.
  const rootState = await hostRootState(paths);
  if (rootState === 'installed') {
    noteStartupFailure(
      await repairLocalDnsUnit(
        paths,
        startupRoot,
        log,
        managedBySystemd ? host.systemctl : undefined,
      ),
    );
    noteStartupFailure(
      await repairNspawnHooks(
        paths,
        startupRoot,
        log,
        executable,
        managedBySystemd ? host.systemctl : undefined,
      ),
    );
  }
  // Every daemon that runs on a linked host records itself: the move
  // waits until current and last-good are both binaries that know the root.
  // A digest recorded already is not written again, and a restart knows
  // the executable's digest by its identity, so nothing is read.
  if (
    rootState === 'linked' &&
    !(await loadRecordedDigests(paths.hostRootAgentDigests)).has(await fileDigest(executable))
  ) {
    await recordDigest(paths.hostRootAgentDigests, executable);
  }
  await saveFileDigestsForNextStart(fileDigestCache, log);
  return startupRoot;
}

/** Writes the digests this start took for the next one; only an optimisation, so a failure is a warning. */
export async function saveFileDigestsForNextStart(record: string, log: Logger): Promise<void> {
  try {
    await saveFileDigests(record);
  } catch (error) {
    log.warn(
      { err: error, path: record },
      'could not record the file digests; the next start hashes the executable again',
    );
  }
}
