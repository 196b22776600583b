/** Host trees for the reset tests, shaped as the Go releases and this product leave them. */
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  binaryFile,
  blueSlotFile,
  currentLinkFile,
  hostPathsUnder,
  lastGoodLinkFile,
  localDnsNetworkFile,
  movingMarkerName,
  nspawnLifecycleFile,
  recoveryScriptFile,
  unitNames,
  nspawnMachineFiles,
  nspawnMachines,
  regenerateConfigTemplate,
  wireguardKeyFiles,
  type HostPaths,
  type NftTable,
} from '@aks-flex-node/layout';
import { onTestFinished } from 'vitest';
import type { NetworkEffects, NetworkLink, NftRule } from './network-effects.js';
import type { ResetEffects } from './reset-effects.js';

/** A temporary host; `/opt/unbounded` is the host's own, mode 0750 with a staged artifact. */
export async function newHost(): Promise<HostPaths> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'aks-flex-node-reset-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const paths = hostPathsUnder(tmp);
  await mkdir(path.join(paths.parent, 'artifacts'), { recursive: true });
  await chmod(paths.parent, 0o750);
  await writeFile(
    path.join(paths.parent, 'artifacts/manifest.json'),
    '{"images":["pause:3.10"]}\n',
  );
  await mkdir(path.join(paths.legacy, 'bin'), { recursive: true });
  await mkdir(paths.configDir, { recursive: true });
  await writeFile(paths.configFile, '{"agent":{"logLevel":"info"}}\n', { mode: 0o600 });
  return paths;
}

async function put(file: string, text: string, mode = 0o644): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text, { mode });
}

/** A started agent's blue/green layout and helpers under `root`, links relative to it as the agent writes them. */
export async function installAgent(root: string): Promise<void> {
  await put(path.join(root, blueSlotFile), '#!/bin/sh\necho agent\n', 0o755);
  await symlink(path.join(root, blueSlotFile), path.join(root, currentLinkFile));
  await symlink(path.join(root, blueSlotFile), path.join(root, lastGoodLinkFile));
  await mkdir(path.join(root, 'bin'), { recursive: true });
  await symlink(path.join(root, currentLinkFile), path.join(root, binaryFile));
  await installHelpers(root);
}

/** The recovery script and the library helpers under `root`. */
export async function installHelpers(root: string): Promise<void> {
  await put(path.join(root, recoveryScriptFile), '#!/bin/sh\nexit 0\n', 0o755);
  await put(path.join(root, nspawnLifecycleFile), '#!/bin/sh\nexit 0\n', 0o755);
  await put(path.join(root, localDnsNetworkFile), '#!/bin/sh\nexit 0\n', 0o700);
}

/** Every unit the agent and Ignition write, the upgrade signal and the digest record. */
export async function installUnitsAndState(paths: HostPaths, firstBoot = true): Promise<void> {
  const units = Object.values(unitNames).filter((u) => firstBoot || u !== unitNames.bootstrap);
  for (const unit of units) await put(path.join(paths.unitDir, unit), '[Unit]\n');
  await put(paths.signalFile, '{"operationName":"upgrade-1"}\n', 0o600);
  await put(paths.hostRootAgentDigests, 'sha256:00\n', 0o600);
}

/** An unfinished move: the root holds copies and the marker, the staging copy is beside it. */
export async function interruptMove(paths: HostPaths): Promise<void> {
  await installAgent(paths.root);
  await put(path.join(paths.root, movingMarkerName), '');
  await put(path.join(paths.staging, binaryFile), '#!/bin/sh\n', 0o755);
}

/** One call made to the fake systemctl or the fake network, with what was on disk when it came. */
export interface EffectCall {
  call: string;
  agentUnitPresent: boolean;
  /** Whether kube1's root filesystem was still there. */
  machinePresent: boolean;
}

/** The fake network's state; reset's calls change it as `ip` and `nft` would. */
export interface FakeNetworkState {
  links: NetworkLink[];
  nftTables: NftTable[];
  /** Rules by `family table chain`. */
  nftRules: Record<string, NftRule[]>;
  routingTables: Record<4 | 6, number[]>;
  /** `iptables-save -t nat` output; its CNI chains go when removed. */
  iptablesNat: string;
  /** Tools "not installed": their listings resolve undefined. */
  missing: ('ip' | 'nft' | 'iptables')[];
}

/**
 * Fake systemctl and network: records each call in one list, in order;
 * `failOn` makes that call throw. The network starts from `network`.
 */
export function fakeEffects(
  paths: HostPaths,
  failOn?: string,
  network: Partial<FakeNetworkState> = {},
) {
  const calls: EffectCall[] = [];
  const state: FakeNetworkState = {
    links: [],
    nftTables: [],
    nftRules: {},
    routingTables: { 4: [], 6: [] },
    iptablesNat: '*nat\nCOMMIT\n',
    missing: [],
    ...network,
  };
  const kube1 = path.join(paths.machinesDir, 'kube1');
  const record = async (call: string) => {
    calls.push({
      call,
      agentUnitPresent: await exists(path.join(paths.unitDir, unitNames.agent)),
      machinePresent: await exists(kube1),
    });
    if (call === failOn) throw new Error(`${call} failed (fake)`);
  };
  const effects: ResetEffects = {
    cancelQueuedRestarts: () => record('cancel-restarts'),
    disableNow: (unit) => record(`disable --now ${unit}`),
    disable: (units) => record(`disable ${units.join(' ')}`),
    stop: (units) => record(`stop ${units.join(' ')}`),
    daemonReload: () => record('daemon-reload'),
    terminateMachine: async (machine) => {
      await record(`terminate ${machine}`);
      return false;
    },
  };
  const key = (t: NftTable, chain: string) => `${t.family} ${t.name} ${chain}`;
  const fakeNetwork: NetworkEffects = {
    listLinks: () => Promise.resolve(state.missing.includes('ip') ? undefined : [...state.links]),
    deleteLink: async (name) => {
      await record(`ip link delete ${name}`);
      state.links = state.links.filter((l) => l.name !== name);
    },
    listNftTables: () =>
      Promise.resolve(state.missing.includes('nft') ? undefined : [...state.nftTables]),
    deleteNftTable: async (t) => {
      await record(`nft delete table ${t.family} ${t.name}`);
      state.nftTables = state.nftTables.filter((x) => x.family !== t.family || x.name !== t.name);
    },
    listNftRules: (t, chain) => Promise.resolve([...(state.nftRules[key(t, chain)] ?? [])]),
    deleteNftRule: async (t, chain, handle) => {
      await record(`nft delete rule ${key(t, chain)} handle ${handle}`);
      state.nftRules[key(t, chain)] = (state.nftRules[key(t, chain)] ?? []).filter(
        (r) => r.handle !== handle,
      );
    },
    listRoutingTables: (family) =>
      Promise.resolve(state.missing.includes('ip') ? undefined : [...state.routingTables[family]]),
    removeRoutingTable: async (family, table) => {
      await record(`ip -${family} routing table ${table} removed`);
      state.routingTables[family] = state.routingTables[family].filter((t) => t !== table);
    },
    saveIptablesNat: () =>
      Promise.resolve(state.missing.includes('iptables') ? undefined : state.iptablesNat),
    removeIptablesNatChains: async (parent, chains) => {
      await record(`iptables nat ${parent} chains removed: ${chains.join(' ')}`);
      state.iptablesNat = state.iptablesNat
        .split('\n')
        .filter((line) => !chains.some((chain) => line.includes(chain)))
        .join('\n');
    },
  };
  return { effects, network: fakeNetwork, calls, state };
}

/**
 * A node as the Go agent library leaves it on disk: both machines with their
 * root filesystem (and its copy of the agent), settings, hooks and
 * enablement, the hook template, and the WireGuard keys.
 */
export async function layOutNodeFiles(paths: HostPaths): Promise<void> {
  for (const machine of nspawnMachines) {
    const files = nspawnMachineFiles(paths, machine);
    await put(path.join(files.rootfs, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\n', 0o755);
    await put(path.join(files.rootfs, 'etc/os-release'), 'ID=ubuntu\n');
    await put(files.nspawnConfig, '[Exec]\nBoot=yes\n');
    await put(path.join(files.overrideDir, 'override.conf'), '[Service]\n');
    await put(files.regenerateConfigUnit, '[Service]\n');
    await mkdir(path.dirname(files.enablementLink), { recursive: true });
    await symlink('/lib/systemd/system/systemd-nspawn@.service', files.enablementLink);
  }
  await put(path.join(paths.unitDir, regenerateConfigTemplate), '[Service]\n');
  for (const key of wireguardKeyFiles)
    await put(path.join(paths.wireguardDir, key), 'key\n', 0o600);
}

export async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

/** What `/opt/unbounded` (apart from the agent's own entries) looks like: its mode and the staged file. */
export async function parentFacts(paths: HostPaths): Promise<string> {
  const mode = ((await stat(paths.parent)).mode & 0o7777).toString(8);
  const manifest = await readFile(path.join(paths.parent, 'artifacts/manifest.json'), 'utf8');
  return `${mode} ${manifest}`;
}

/** Every path under the host's prefix with its type and mode, sorted: "changes nothing" compares two of these. */
export async function treeSnapshot(paths: HostPaths): Promise<string[]> {
  const entries = await readdir(paths.prefix, { recursive: true, withFileTypes: true });
  const lines = await Promise.all(
    entries.map(async (entry) => {
      const full = path.join(entry.parentPath, entry.name);
      const info = await lstat(full);
      return `${path.relative(paths.prefix, full)} ${(info.mode & 0o170777).toString(8)}`;
    }),
  );
  return lines.sort();
}
