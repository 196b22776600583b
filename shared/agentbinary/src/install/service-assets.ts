import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AgentBinaryPaths } from '../agent-binary-paths.js';
import { makeIoError, writeFileAtomic } from '@aks-flex-node/fs';
import { nspawnCopyPath } from '../nspawn/nspawn-copy.js';
import { legacyRootInUse } from './legacy-root-in-use.js';
import { isHostRootMoveUnfinished } from '@aks-flex-node/hostroot';
import { nspawnMachines, unitNames, type HostPaths } from '@aks-flex-node/layout';
import { isNotFound, type Logger } from '@aks-flex-node/log';
import {
  otherReleaseUnitTemplates,
  recoveryScriptLiterals,
  recoveryScriptTemplate,
  unitTemplates,
} from '@aks-flex-node/units';
import { releaseKindOf, thisProductOnly, type ReleaseKinds } from './release-kind.js';
import { retireProductOnlyUnits, type RetireSystemctl } from './retire-product-units.js';

/** Whether the units must leave the legacy root writable ({@link legacyRootInUse} decides). */
export type LegacyRootUse = 'in-use' | 'released';

/**
 * What the agent unit carries beyond the layout, as the Go releases' service
 * options: `arc` adds `himdsd.service` (Azure Arc's metadata service) to its
 * After= and Wants=. Read back from the installed unit at every rewrite.
 */
export interface ServiceOptions {
  arc: boolean;
}

/** A host without Arc: the options a missing unit, or one not naming himdsd, gives. */
export const defaultServiceOptions: ServiceOptions = { arc: false };

/** The unit Azure Arc's agent runs as; an agent unit that names it is an Arc host's. */
const arcUnit = 'himdsd.service';

/**
 * The options the installed agent unit was written with (spec agentbinary
 * 3.6.3): Arc when it names `himdsd.service`. A missing unit gives the
 * defaults. Throws HOST_ROOT_IO when the unit cannot be read.
 */
export async function readInstalledServiceOptions(hostPaths: HostPaths): Promise<ServiceOptions> {
  const unit = await currentContent(path.join(hostPaths.unitDir, unitNames.agent));
  // A line that names it, not a comment: a comment is no dependency.
  const named = unit?.split('\n').some((line) => !/^\s*[#;]/.test(line) && line.includes(arcUnit));
  return { arc: named ?? false };
}

/**
 * The directories of the machines' copies of the agent, optional (`-`): the
 * copy is replaced by a rename, so its directory must be writable, and a
 * machine that does not exist yet must not fail the unit's start.
 */
function machineCopyWritePaths(hostPaths: HostPaths): string {
  return nspawnMachines
    .map((machine) => ` -${path.dirname(nspawnCopyPath(hostPaths.machinesDir, machine))}`)
    .join('');
}

/** One file the product writes for systemd, with its mode. */
export interface ServiceAsset {
  path: string;
  content: string;
  mode: number;
}

/** Fills a unit template's `{{field}}`s; a field the caller did not give is an error, never left in. */
export function fillTemplate(
  name: string,
  template: string,
  fields: Record<string, string>,
): string {
  const filled = template.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => {
    const value = fields[key];
    if (value === undefined)
      throw new Error(`unit template ${name} names an unknown field ${whole}`);
    return value;
  });
  return filled;
}

/** What the agent unit adds while last-good is this product: the guard runs last-good. */
const guardDependency = `# Started with the agent; it acts only while a switched upgrade is unjudged.
Wants=${unitNames.upgradeGuard}
`;

/**
 * The service assets for a layout, in the order they must be written:
 * dependencies first (the recovery script, its unit, the socket), the agent
 * unit last. An interrupted write then never leaves systemd with an agent
 * unit whose OnFailure= or Requires= names something missing.
 *
 * `kinds` says whose binaries the links name. Another release never runs
 * under this product's confinement: with `current` another release's, the
 * agent unit is the one that release wrote; with last-good another
 * release's, so is the recovery unit (it runs last-good's
 * recover-agent-upgrade), and the agent unit does not pull in the guard,
 * which would run last-good confined (a Go release has no guard: its
 * recovery unit stays the only rollback path, as it was for it).
 */
export function renderServiceAssets(
  hostPaths: HostPaths,
  binaryPaths: AgentBinaryPaths,
  legacyRoot: LegacyRootUse,
  options: ServiceOptions = defaultServiceOptions,
  kinds: ReleaseKinds = thisProductOnly,
): ServiceAsset[] {
  const fields = {
    // The unit runs the `current` link, so a switch needs no unit rewrite.
    execBinary: binaryPaths.current,
    configFile: hostPaths.configFile,
    socketPath: hostPaths.socket,
    recoveryScript: binaryPaths.recoveryScript,
    // The guard runs whatever last-good names when it starts: never the candidate.
    lastGood: binaryPaths.lastGood,
    // Optional (`-`): a read-only or absent /usr/local must not fail the start.
    legacyWritePath: legacyRoot === 'in-use' ? ` -${hostPaths.legacy}` : '',
    machineCopyWritePaths: machineCopyWritePaths(hostPaths),
    arcDependency: options.arc ? ` ${arcUnit}` : '',
    guardDependency: kinds.lastGood === 'this-product' ? guardDependency : '',
  };
  const script = recoveryScriptTemplate
    .replaceAll(recoveryScriptLiterals.lastGood, binaryPaths.lastGood)
    .replaceAll(recoveryScriptLiterals.signal, hostPaths.signalFile)
    .replaceAll(recoveryScriptLiterals.agentUnitFile, path.join(hostPaths.unitDir, unitNames.agent))
    .replace(
      recoveryScriptLiterals.otherReleaseAgentUnit,
      fillTemplate(unitNames.agent, otherReleaseUnitTemplates[unitNames.agent], fields),
    );
  const unit = (name: keyof typeof unitTemplates): ServiceAsset => ({
    path: path.join(hostPaths.unitDir, name),
    content: fillTemplate(name, unitTemplates[name], fields),
    mode: 0o644,
  });
  const otherRelease = (name: keyof typeof otherReleaseUnitTemplates): ServiceAsset => ({
    path: path.join(hostPaths.unitDir, name),
    content: fillTemplate(name, otherReleaseUnitTemplates[name], fields),
    mode: 0o644,
  });
  const recovery =
    kinds.lastGood === 'this-product' ? unit(unitNames.recovery) : otherRelease(unitNames.recovery);
  const scriptAsset = { path: binaryPaths.recoveryScript, content: script, mode: 0o750 };
  if (kinds.current === 'other-release') {
    // Handed back: no socket or guard, which that release's units never
    // name and its reset never removes (retireProductOnlyUnits removes them).
    return [scriptAsset, recovery, otherRelease(unitNames.agent)];
  }
  return [
    scriptAsset,
    recovery,
    unit(unitNames.upgradeGuard),
    unit(unitNames.agentSocket),
    unit(unitNames.agent),
  ];
}

async function currentContent(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw makeIoError('read', file, error);
  }
}

/**
 * The assets for the host as it is on disk now: the legacy root writable only
 * while in use, the installed unit's options (Arc) kept, so no rewrite
 * (daemon start, move, activation, install) drops them, and each unit the one
 * its binary expects (whose binaries `current` and last-good name now).
 */
export async function serviceAssetsForHost(
  hostPaths: HostPaths,
  binaryPaths: AgentBinaryPaths,
): Promise<ServiceAsset[]> {
  const use = (await legacyRootInUse(hostPaths, binaryPaths)) ? 'in-use' : 'released';
  return renderServiceAssets(
    hostPaths,
    binaryPaths,
    use,
    await readInstalledServiceOptions(hostPaths),
    await releaseKindsOf(binaryPaths),
  );
}

/** Whose binaries `current` and last-good name now ({@link releaseKindOf}). */
export async function releaseKindsOf(binaryPaths: AgentBinaryPaths): Promise<ReleaseKinds> {
  return {
    current: await releaseKindOf(binaryPaths.current, process.execPath),
    lastGood: await releaseKindOf(binaryPaths.lastGood, process.execPath),
  };
}

/**
 * Before the agent unit restarts into what `current` names (after a switch,
 * a rollback, a recovery): writes the units those binaries expect and
 * reloads systemd when anything changed, so a Go candidate, a Go last-good
 * or a downgrade starts under its own release's units, and this product
 * under its confined ones again. Returns whether anything changed.
 */
export async function writeUnitsForBinaries(
  hostPaths: HostPaths,
  binaryPaths: AgentBinaryPaths,
  systemctl: RetireSystemctl,
  log: Logger,
): Promise<boolean> {
  // Mid-move the resolved root is the copy, not yet proven to run; the
  // move's own unit rewrite names it after its verify (as convergeHostInstall).
  if (await isHostRootMoveUnfinished(hostPaths)) return false;
  const changed = await writeServiceAssets(await serviceAssetsForHost(hostPaths, binaryPaths), log);
  if (changed) await systemctl.daemonReload();
  // After the reload, so the agent unit no longer requires the socket.
  if ((await releaseKindsOf(binaryPaths)).current === 'this-product') return changed;
  return (await retireProductOnlyUnits(hostPaths, systemctl, log)) || changed;
}

/** Whether any asset is missing or differs byte for byte from what is installed. Reads only. */
export async function serviceAssetsDiffer(assets: readonly ServiceAsset[]): Promise<boolean> {
  for (const asset of assets) {
    if ((await currentContent(asset.path)) !== asset.content) return true;
  }
  return false;
}

/**
 * Whether every asset's file already holds its content, by the rule
 * {@link writeServiceAssets} writes by: true when it would write nothing.
 * Reads only.
 */
export async function serviceAssetsAreWritten(assets: readonly ServiceAsset[]): Promise<boolean> {
  for (const asset of assets) {
    if ((await currentContent(asset.path)) !== asset.content) return false;
  }
  return true;
}

/**
 * Writes each asset atomically, in order, skipping those already identical.
 * Returns whether anything changed, so the caller reloads systemd only then.
 */
export async function writeServiceAssets(
  assets: readonly ServiceAsset[],
  log: Logger,
): Promise<boolean> {
  let changed = false;
  for (const asset of assets) {
    if ((await currentContent(asset.path)) === asset.content) continue;
    await writeFileAtomic(asset.path, asset.content, { mode: asset.mode });
    log.info({ path: asset.path }, 'wrote a service asset');
    changed = true;
  }
  return changed;
}
