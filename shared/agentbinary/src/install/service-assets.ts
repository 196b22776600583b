import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AgentBinaryPaths } from '../agent-binary-paths.js';
import { makeIoError, writeFileAtomic } from '@aks-flex-node/fs';
import { nspawnCopyPath } from '../nspawn/nspawn-copy.js';
import { legacyRootInUse } from './legacy-root-in-use.js';
import { nspawnMachines, unitNames, type HostPaths } from '@aks-flex-node/layout';
import { isNotFound, type Logger } from '@aks-flex-node/log';
import {
  recoveryScriptLiterals,
  recoveryScriptTemplate,
  unitTemplates,
} from '@aks-flex-node/units';

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

/**
 * The service assets for a layout, in the order they must be written:
 * dependencies first (the recovery script, its unit, the socket), the agent
 * unit last. An interrupted write then never leaves systemd with an agent
 * unit whose OnFailure= or Requires= names something missing.
 */
export function renderServiceAssets(
  hostPaths: HostPaths,
  binaryPaths: AgentBinaryPaths,
  legacyRoot: LegacyRootUse,
  options: ServiceOptions = defaultServiceOptions,
): ServiceAsset[] {
  const script = recoveryScriptTemplate
    .replaceAll(recoveryScriptLiterals.lastGood, binaryPaths.lastGood)
    .replaceAll(recoveryScriptLiterals.signal, hostPaths.signalFile);
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
  };
  const unit = (name: keyof typeof unitTemplates): ServiceAsset => ({
    path: path.join(hostPaths.unitDir, name),
    content: fillTemplate(name, unitTemplates[name], fields),
    mode: 0o644,
  });
  return [
    { path: binaryPaths.recoveryScript, content: script, mode: 0o750 },
    unit(unitNames.recovery),
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
 * while in use, and the installed unit's options (Arc) kept, so no rewrite
 * (daemon start, move, activation, install) drops them.
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
  );
}

/** Whether any asset is missing or differs byte for byte from what is installed. Reads only. */
export async function serviceAssetsDiffer(assets: readonly ServiceAsset[]): Promise<boolean> {
  for (const asset of assets) {
    if ((await currentContent(asset.path)) !== asset.content) return true;
  }
  return false;
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
