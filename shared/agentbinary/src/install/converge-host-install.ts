import {
  isHostRootMoveUnfinished,
  migrateHostRoot,
  prepareHostRoot,
  resolveHostRoot,
} from '@aks-flex-node/hostroot';
import { hostRootMarkers, hostRootSubdirs, type HostPaths } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import type { Systemctl } from '@aks-flex-node/systemd';
import { agentBinaryPathsUnder, type AgentBinaryPaths } from '../agent-binary-paths.js';
import { ensureAgentBinaryLayout } from '../ensure-layout.js';
import { installHostBinary, type ExecutableCopy } from '../install-host-binary.js';
import { serviceAssetsForHost, writeServiceAssets } from './service-assets.js';

/** What {@link convergeHostInstall} needs. */
export interface ConvergeOptions {
  paths: HostPaths;
  log: Logger;
  /** The running executable; copied when the root has no usable binary. */
  executable: string;
  /** When given, the units are written and systemd reloaded; when absent (run by hand), they are not touched. */
  systemctl?: Systemctl;
}

/** What {@link convergeHostInstall} leaves. */
export interface ConvergedInstall {
  binaryPaths: AgentBinaryPaths;
  /**
   * The copy of the running executable this call installed, if it made one
   * (a first start of a binary from elsewhere); the layout keeps that file
   * in a slot (ensure-layout.ts).
   */
  executableCopy?: ExecutableCopy;
}

/**
 * Brings the host to a complete installation of the running binary. It runs
 * at every daemon start and in `start`, and is idempotent:
 *
 * 1. Migrate first: on a host an earlier release installed, any path resolved
 *    before it would name the empty host root instead of the live layout.
 * 2. Seed the plain binary if no usable one is there, and prove it runs
 *    (noexec surfaces here, before anything names the copy).
 * 3. Initialise the blue/green layout from it.
 * 4. Write the service assets, dependencies first, and reload systemd only
 *    if something changed. Not while a host-root move is unfinished: the
 *    resolved root is then the copy, not yet proven to run; the move's own
 *    unit rewrite points the units at it after its verify.
 */
export async function convergeHostInstall(options: ConvergeOptions): Promise<ConvergedInstall> {
  const { paths, log } = options;
  await migrateHostRoot(paths, log, hostRootMarkers());
  const binaryPaths = agentBinaryPathsUnder(await resolveHostRoot(paths));
  const executableCopy = await installHostBinary(binaryPaths, {
    executable: options.executable,
    prepare: () => prepareHostRoot(paths, log, hostRootSubdirs()),
    log,
  });
  await ensureAgentBinaryLayout(binaryPaths, log);
  if (options.systemctl !== undefined && !(await isHostRootMoveUnfinished(paths))) {
    const changed = await writeServiceAssets(await serviceAssetsForHost(paths, binaryPaths), log);
    if (changed) await options.systemctl.daemonReload();
  }
  return { binaryPaths, ...(executableCopy === undefined ? {} : { executableCopy }) };
}
