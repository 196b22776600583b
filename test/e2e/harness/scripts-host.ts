import { refuseSharedNetwork } from './private-network.js';
import path from 'node:path';
import { expect } from 'vitest';
import { operationSchema, type Operation } from '@aks-flex-node/api';
import { repoRoot } from './e2e-paths.js';
import type { Host } from './host.js';
import { productBinary } from './product.js';
import { packArgv } from './release-archive.js';
import { productPaths, productUnits } from './product-names.js';
import { waitForStartSequence } from './product-status.js';
import { readJournal } from './journal.js';
import { formatCommandResult, runProcess } from './run-process.js';
import { runOrThrow } from './run-or-throw.js';
import { readUnitState, waitForUnitState } from './unit-state.js';
import { copyIn } from './write-host-file.js';

// What the scenarios that install with install.sh, reset, rejoin and
// uninstall with uninstall.sh share: the Go-named archive, the scripts on the
// host, and the end states spec/scripts.md 4 and spec/daemon.md 8.1 describe.

/** The release's architecture as the Go releases and the scripts spell it. */
const goArch = process.arch === 'arm64' ? 'arm64' : 'amd64';
const archiveName = `aks-flex-node-linux-${goArch}.tar.gz`;
const scriptsDir = '/var/tmp/aks-flex-node-scripts';

/** Packs the built product as the one member `aks-flex-node-linux-<arch>` into `dir`. */
export async function packGoNamedArchive(dir: string): Promise<string> {
  const stage = path.join(dir, 'stage');
  const member = `aks-flex-node-linux-${goArch}`;
  const archive = path.join(dir, archiveName);
  for (const argv of [
    ['mkdir', '-p', stage],
    ['install', '-m', '0755', productBinary, path.join(stage, member)],
    packArgv(stage, archive, member),
  ]) {
    const result = await runProcess(argv, { timeoutMs: 120_000 });
    if (result.exitCode !== 0) {
      throw new Error(formatCommandResult(argv.join(' '), result));
    }
  }
  return archive;
}

/** Copies install.sh, uninstall.sh and the archive onto the host, where runScript finds them. */
export async function copyScriptsIn(host: Host, archive: string): Promise<void> {
  for (const script of ['install.sh', 'uninstall.sh']) {
    await copyIn(host, path.join(repoRoot, 'scripts', script), `${scriptsDir}/${script}`);
  }
  await copyIn(host, archive, `${scriptsDir}/${archiveName}`, 0o644);
}

/** Runs one of the scripts as an operator would, the archive by `file://` URL. */
export async function runScript(host: Host, script: string, args: readonly string[] = []) {
  // uninstall.sh removes interfaces, policy routes and nft tables.
  if (script === 'uninstall.sh') await refuseSharedNetwork(host, 'uninstall.sh');
  return host.run(
    [
      'env',
      'AKS_FLEX_NODE_VERSION=v0.0.0-e2e',
      `AKS_FLEX_NODE_DOWNLOAD_URL=file://${scriptsDir}/${archiveName}`,
      'bash',
      `${scriptsDir}/${script}`,
      ...args,
    ],
    { timeoutMs: 240_000 },
  );
}

/** The host's own /opt/unbounded: mode 0750, a staged artifact and an operator's file. */
export const stageParent =
  'install -d -m 0750 /opt/unbounded && install -d -m 0700 /opt/unbounded/artifacts && ' +
  'echo \'{"images":["pause:3.10"]}\' >/opt/unbounded/artifacts/manifest.json && ' +
  'echo "operator notes" >/opt/unbounded/README.operator && chmod 0640 /opt/unbounded/README.operator';

/** /opt/unbounded apart from the agent's own paths: names, types, modes, owners and file digests. */
export async function parentSnapshot(host: Host): Promise<string> {
  const prune =
    '\\( -path /opt/unbounded/agent -o -path /opt/unbounded/agent.staging \\) -prune -o';
  const result = await runOrThrow(host, [
    'bash',
    '-c',
    `find /opt/unbounded ${prune} -printf '%p %y %m %u\\n' | sort; ` +
      `find /opt/unbounded ${prune} -type f -exec sha256sum {} + | sort`,
  ]);
  return result.stdout;
}

/** The paths among `paths` that exist (a dangling link counts). */
async function presentOf(host: Host, paths: readonly string[]): Promise<string[]> {
  const left = await host.run([
    'bash',
    '-c',
    'for p in "$@"; do if [ -e "$p" ] || [ -L "$p" ]; then echo "$p"; fi; done',
    'left',
    ...paths,
  ]);
  return left.stdout.trim().split('\n').filter(Boolean);
}

/** Paths that must be gone after uninstall, whatever the layout was. */
const agentPaths = [
  '/opt/unbounded/agent',
  '/opt/unbounded/agent.staging',
  '/usr/local/bin/aks-flex-node',
  '/usr/local/lib/aks-flex-node',
  '/usr/local/bin/unbounded-agent-nspawn-lifecycle',
  '/usr/local/libexec/unbounded-localdns-network',
  '/etc/aks-flex-node',
  '/var/lib/aks-flex-node',
  '/var/log/aks-flex-node',
  '/run/aks-flex-node',
  ...Object.values(productUnits).map((unit) => `/etc/systemd/system/${unit}`),
];

/** After uninstall: nothing of the agent on disk, and its unit not running. */
export async function expectNothingOfTheAgent(host: Host): Promise<void> {
  expect(await presentOf(host, agentPaths)).toEqual([]);
  expect((await readUnitState(host, productUnits.agent)).activeState).not.toBe('active');
}

/** Runs install.sh and `start`; returns the directory install.sh put the binary in. */
export async function installAndStart(host: Host, round: string): Promise<string> {
  const install = await runScript(host, 'install.sh');
  expect(install.exitCode, `${round}: ${install.stdout}${install.stderr}`).toBe(0);
  const installed = /Binary installed to (\S+)\/aks-flex-node/.exec(install.stdout)?.[1];
  expect(installed, install.stdout).toBeDefined();
  const dir = installed ?? '';
  await runOrThrow(host, ['test', '-x', `${dir}/aks-flex-node`]);
  await runOrThrow(host, [`${dir}/aks-flex-node`, 'start'], { timeoutMs: 180_000 });
  await waitForUnitState(host, productUnits.agent, 'active');
  await waitForStartSequence(host);
  return dir;
}

/** What reset removes, whatever the layout was. */
const resetPaths = [
  ...Object.values(productUnits).map((unit) => `/etc/systemd/system/${unit}`),
  '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-recovery.sh',
  '/usr/local/lib/aks-flex-node/aks-flex-node-recovery.sh',
  '/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle',
  '/usr/local/bin/unbounded-agent-nspawn-lifecycle',
  '/etc/aks-flex-node/agent-upgrade-signal.json',
  '/etc/aks-flex-node/host-root-agents',
  '/opt/unbounded/agent.staging',
  '/opt/unbounded/agent/.moving',
];

/** After a reset: no agent unit or helper, the agent stopped, its binary kept and callable. */
export async function expectResetHost(host: Host): Promise<void> {
  await waitForUnitState(host, productUnits.agent, 'inactive', { timeoutMs: 60_000 });
  expect(await presentOf(host, resetPaths)).toEqual([]);
  await runOrThrow(host, [productPaths.installedBinary, 'version']);
  await runOrThrow(host, ['test', '-f', '/etc/aks-flex-node/config.json']);
}

/**
 * `aks-flex-node reset --json` through the daemon, which records the outcome
 * and stops itself; the operation is the last line the CLI prints. Fails the
 * test with the CLI's output when it does not exit 0.
 */
export async function resetThroughDaemon(host: Host): Promise<Operation> {
  await refuseSharedNetwork(host, 'a reset');
  const reset = await host.run([productPaths.installedBinary, 'reset', '--json'], {
    timeoutMs: 120_000,
  });
  expect(reset.exitCode, `${reset.stdout}${reset.stderr}`).toBe(0);
  const operation = operationSchema.parse(JSON.parse(reset.stdout.trim().split('\n').at(-1) ?? ''));
  // Once the daemon has gone, its record must still say what the CLI was
  // told: a daemon that rewrote it while stopping (as one did when the stop
  // it queued killed its own systemctl) both lied and raced uninstall.sh's
  // removal of /var/lib/aks-flex-node.
  await waitForUnitState(host, productUnits.agent, 'inactive', { timeoutMs: 60_000 });
  const record = await runOrThrow(host, [
    'cat',
    path.join(productPaths.operationsDir, `${operation.id}.json`),
  ]);
  expect(operationSchema.parse(JSON.parse(record.stdout)), record.stdout).toMatchObject({
    state: operation.state,
    phase: operation.phase,
  });
  const journal = await readJournal(host, productUnits.agent);
  expect(journal).not.toContain('"msg":"reset failed"');
  return operation;
}
