import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { operationSchema } from '@aks-flex-node/api';
import { describeWithProduct } from './harness/describe-with-product.js';
import { repoRoot } from './harness/e2e-paths.js';
import type { Host } from './harness/index.js';
import {
  copyIn,
  createReleaseDir,
  productBinary,
  productPaths,
  productUnits,
  readUnitState,
  runOrThrow,
  waitForUnitState,
  withHost,
} from './harness/index.js';
import { formatCommandResult, runProcess } from './harness/run-process.js';

// install.sh, start, the agent's reset, a rejoin (install.sh and start
// again) and uninstall.sh, under real systemd, from a release archive named
// as the Go releases name it. uninstall.sh runs the agent's own reset.

/** The release's architecture as the Go releases and the scripts spell it. */
const goArch = process.arch === 'arm64' ? 'arm64' : 'amd64';
const archiveName = `aks-flex-node-linux-${goArch}.tar.gz`;
const scriptsDir = '/var/tmp/aks-flex-node-scripts';

/** Packs the built product as the one member `aks-flex-node-linux-<arch>`. */
async function packGoNamedArchive(dir: string): Promise<string> {
  const stage = path.join(dir, 'stage');
  const member = `aks-flex-node-linux-${goArch}`;
  const archive = path.join(dir, archiveName);
  for (const argv of [
    ['mkdir', '-p', stage],
    ['install', '-m', '0755', productBinary, path.join(stage, member)],
    ['tar', '-C', stage, '--owner=0', '--group=0', '--numeric-owner', '-czf', archive, member],
  ]) {
    const result = await runProcess(argv, { timeoutMs: 120_000 });
    if (result.exitCode !== 0) {
      throw new Error(formatCommandResult(argv.join(' '), result));
    }
  }
  return archive;
}

/** The host's own /opt/unbounded: mode 0750 and a staged artifact. */
const stageParent =
  'install -d -m 0750 /opt/unbounded && install -d -m 0700 /opt/unbounded/artifacts && ' +
  'echo \'{"images":["pause:3.10"]}\' >/opt/unbounded/artifacts/manifest.json';

/** /opt/unbounded apart from the agent's own paths: names, types, modes, and file digests. */
async function parentSnapshot(host: Host): Promise<string> {
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

function runScript(host: Host, script: string, args: readonly string[] = []) {
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

/** Paths that must be gone after uninstall, whatever the layout was. */
const agentPaths = [
  '/opt/unbounded/agent',
  '/opt/unbounded/agent.staging',
  '/usr/local/bin/aks-flex-node',
  '/usr/local/lib/aks-flex-node',
  '/usr/local/bin/unbounded-agent-nspawn-lifecycle',
  '/etc/aks-flex-node',
  '/var/lib/aks-flex-node',
  '/var/log/aks-flex-node',
  '/run/aks-flex-node',
  ...Object.values(productUnits).map((unit) => `/etc/systemd/system/${unit}`),
];

async function expectNothingOfTheAgent(host: Host): Promise<void> {
  const left = await host.run([
    'bash',
    '-c',
    'for p in "$@"; do if [ -e "$p" ] || [ -L "$p" ]; then echo "$p"; fi; done',
    'left',
    ...agentPaths,
  ]);
  expect(left.stdout.trim().split('\n').filter(Boolean)).toEqual([]);
  expect((await readUnitState(host, productUnits.agent)).activeState).not.toBe('active');
}

/** Runs install.sh and `start`; returns the directory install.sh put the binary in. */
async function installAndStart(host: Host, round: string): Promise<string> {
  const install = await runScript(host, 'install.sh');
  expect(install.exitCode, `${round}: ${install.stdout}${install.stderr}`).toBe(0);
  const installed = /Binary installed to (\S+)\/aks-flex-node/.exec(install.stdout)?.[1];
  expect(installed, install.stdout).toBeDefined();
  const dir = installed ?? '';
  await runOrThrow(host, ['test', '-x', `${dir}/aks-flex-node`]);
  await runOrThrow(host, [`${dir}/aks-flex-node`, 'start'], { timeoutMs: 180_000 });
  await waitForUnitState(host, productUnits.agent, 'active');
  return dir;
}

/** After a reset: no agent unit or helper, the agent stopped, its binary kept and callable. */
async function expectResetHost(host: Host): Promise<void> {
  await waitForUnitState(host, productUnits.agent, 'inactive', { timeoutMs: 60_000 });
  const left = await host.run([
    'bash',
    '-c',
    'for p in "$@"; do if [ -e "$p" ] || [ -L "$p" ]; then echo "$p"; fi; done',
    'left',
    ...resetPaths,
  ]);
  expect(left.stdout.trim().split('\n').filter(Boolean)).toEqual([]);
  await runOrThrow(host, [productPaths.installedBinary, 'version']);
  await runOrThrow(host, ['test', '-f', '/etc/aks-flex-node/config.json']);
}

/** A transient restart unit named as the Go releases name the one they queue. */
const queuedRestart = 'aks-flex-node-agent-upgrade-restart-1764559999000000000';

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

describeWithProduct(
  'scripts: install.sh, start, reset, a rejoin and uninstall.sh under real systemd',
  () => {
    let releaseDir = '';
    let archive = '';

    beforeAll(async () => {
      releaseDir = await createReleaseDir();
      archive = await packGoNamedArchive(releaseDir);
    });

    afterAll(async () => {
      if (releaseDir !== '') {
        await rm(releaseDir, { recursive: true, force: true });
      }
    });

    it.each([
      ['plain', '/usr/local/bin'],
      ['acl', '/opt/unbounded/agent/bin'],
    ] as const)(
      '%s host: installed into %s, started, refused while running, reset, rejoined, uninstalled',
      async (variant, installDir) => {
        await withHost({ variant, name: 'scripts' }, async (host) => {
          for (const script of ['install.sh', 'uninstall.sh']) {
            await copyIn(host, path.join(repoRoot, 'scripts', script), `${scriptsDir}/${script}`);
          }
          await copyIn(host, archive, `${scriptsDir}/${archiveName}`, 0o644);
          await runOrThrow(host, ['bash', '-c', stageParent]);
          const parentBefore = await parentSnapshot(host);

          // Install and start, reset, rejoin (install again and start), uninstall.
          const firstDir = await installAndStart(host, 'install');
          expect(firstDir).toBe(installDir);

          // The agent now owns its binary: a second install must not replace it.
          const again = await runScript(host, 'install.sh');
          expect(again.exitCode, again.stdout).toBe(78);
          expect(again.stderr).toContain('while the agent service is installed or active');
          expect(again.stdout).not.toContain('Binary installed');

          // A restart the Go releases queue during a move, still pending: reset
          // must cancel it, or it would start the daemon again after the reset.
          await runOrThrow(host, [
            'systemd-run',
            '--quiet',
            '--collect',
            `--unit=${queuedRestart}`,
            '--on-active=120s',
            '/usr/bin/systemctl',
            'restart',
            productUnits.agent,
          ]);
          expect((await readUnitState(host, `${queuedRestart}.timer`)).activeState).toBe('active');

          // The daemon answers the reset, records it and stops itself.
          const reset = await host.run([productPaths.installedBinary, 'reset', '--json'], {
            timeoutMs: 120_000,
          });
          expect(reset.exitCode, `${reset.stdout}${reset.stderr}`).toBe(0);
          const operation = operationSchema.parse(
            JSON.parse(reset.stdout.trim().split('\n').at(-1) ?? ''),
          );
          expect(operation).toMatchObject({ kind: 'reset', state: 'succeeded' });
          expect(operation.id).toMatch(/^reset-\d/);
          expect(operation.keptBinary).toBe(productPaths.installedBinary);
          await expectResetHost(host);
          expect(await parentSnapshot(host)).toBe(parentBefore);
          expect((await readUnitState(host, `${queuedRestart}.timer`)).activeState).not.toBe(
            'active',
          );

          // A second reset finds no daemon, resets offline and changes nothing.
          const second = await host.run([productPaths.installedBinary, 'reset', '--json'], {
            timeoutMs: 120_000,
          });
          expect(second.exitCode, `${second.stdout}${second.stderr}`).toBe(0);
          expect(second.stdout).toContain('"removed":[]');
          await expectResetHost(host);

          await installAndStart(host, 'rejoin');

          const uninstall = await runScript(host, 'uninstall.sh', ['--force']);
          expect(uninstall.exitCode, `${uninstall.stdout}${uninstall.stderr}`).toBe(0);
          // Through the agent's own reset this time, not the script's fallback.
          expect(uninstall.stdout).toContain('Reset completed');
          expect(uninstall.stderr).not.toContain('removing the units directly');
          await expectNothingOfTheAgent(host);
          expect(await parentSnapshot(host)).toBe(parentBefore);
        });
      },
    );
  },
);
