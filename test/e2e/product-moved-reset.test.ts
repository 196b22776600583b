import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import type { Host } from './harness/index.js';
import {
  copyIn,
  copyScriptsIn,
  createReleaseDir,
  expectNothingOfTheAgent,
  expectRealNodeGone,
  expectResetHost,
  resetThroughDaemon,
  installAndStart,
  layOutFixture,
  layOutRealNode,
  realNodeOf,
  packGoNamedArchive,
  parentSnapshot,
  productBinary,
  productPaths,
  productUnits,
  runOrThrow,
  runScript,
  stageParent,
  startRealNodeMachines,
  waitForProductStatus,
  waitForUnitState,
  withHost,
} from './harness/index.js';
import { goScriptConfig } from './harness/go-script-config.js';
import { legacyLib, olderAgentUnit } from './harness/legacy-host.js';

// A host an earlier release installed under /usr/local, moved by this build
// into a real /opt/unbounded/agent at its own start (both slots are this
// build, so the move is ready at once: no AgentUpgrade is needed to push an
// earlier release out of last-good), then the agent's reset, a rejoin with
// install.sh and `start`, and uninstall.sh, under real systemd. The host's
// /opt/unbounded (its own mode, an artifact, an operator's file) must come
// out of every step exactly as it went in.

/** Lays out the earlier release's host with this build in both slots, and starts its unit. */
async function layOutLegacyHostOfThisBuild(host: Host): Promise<void> {
  await layOutFixture(host, {
    [`${legacyLib}/aks-flex-node-current`]: {
      kind: 'symlink',
      target: `${legacyLib}/aks-flex-node-blue`,
    },
    [`${legacyLib}/aks-flex-node-last-good`]: {
      kind: 'symlink',
      target: `${legacyLib}/aks-flex-node-blue`,
    },
    '/usr/local/bin/aks-flex-node': {
      kind: 'symlink',
      target: `${legacyLib}/aks-flex-node-current`,
    },
    // As the Go bootstrap.sh rendered it.
    '/etc/aks-flex-node/config.json': { kind: 'file', content: goScriptConfig, mode: 0o600 },
    '/etc/systemd/system/aks-flex-node-agent.service': { kind: 'file', content: olderAgentUnit },
  });
  await copyIn(host, productBinary, `${legacyLib}/aks-flex-node-blue`, 0o755);
  await runOrThrow(host, ['systemctl', 'daemon-reload']);
  await runOrThrow(host, ['systemctl', 'enable', '--now', productUnits.agent]);
}

async function shell(host: Host, script: string): Promise<string> {
  return (await runOrThrow(host, ['/bin/bash', '-c', script])).stdout.trim();
}

describeWithProduct('product: a host moved from /usr/local, reset, rejoined, uninstalled', () => {
  let releaseDir = '';
  let archive = '';
  beforeAll(async () => {
    releaseDir = await createReleaseDir();
    archive = await packGoNamedArchive(releaseDir);
  });
  afterAll(async () => {
    if (releaseDir !== '') await rm(releaseDir, { recursive: true, force: true });
  });

  it('daemon#8.4 moved by its own start; reset keeps the moved binary; install.sh rejoins into /opt/unbounded/agent; uninstall.sh leaves /opt/unbounded as it was', async () => {
    await withHost(
      {
        variant: 'plain',
        name: 'moved-reset',
        // The node an earlier release provisioned: its helpers and hooks under /usr/local.
        node: { helperRoot: '/usr/local', config: false },
      },
      async (host) => {
        await copyScriptsIn(host, archive);
        await runOrThrow(host, ['bash', '-c', stageParent]);
        const parentBefore = await parentSnapshot(host);

        const node = realNodeOf(host);
        await layOutLegacyHostOfThisBuild(host);
        const moved = await waitForProductStatus(
          host,
          (s) => s.hostRoot.state === 'installed' && s.startup.gate === 'open',
          240_000,
        );
        expect(moved.startup.move).toBe('moved');
        expect(await shell(host, 'find /usr/local -name "aks-flex-node*" | sort')).toBe('');
        expect(
          await shell(
            host,
            'test -d /opt/unbounded/agent && ! test -L /opt/unbounded/agent && echo dir',
          ),
        ).toBe('dir');
        expect(await parentSnapshot(host)).toBe(parentBefore);
        // The move took the node's helpers along; its machines start on the moved hooks.
        await startRealNodeMachines(host);

        // Reset through the daemon, which records the outcome and stops itself.
        const operation = await resetThroughDaemon(host);
        expect(operation).toMatchObject({ kind: 'reset', state: 'succeeded' });
        expect(operation.keptBinary).toBe(productPaths.installedBinary);
        await expectResetHost(host);
        await expectRealNodeGone(host, node);
        // Nothing of the agent came back under /usr/local, and the host root is a real directory still.
        expect(
          await shell(host, 'find /usr/local -name "aks-flex-node*" -o -name "unbounded-*" | sort'),
        ).toBe('');
        expect(await parentSnapshot(host)).toBe(parentBefore);

        // The rejoin finds the layout reset kept under the host root, not /usr/local.
        const dir = await installAndStart(host, 'rejoin');
        expect(dir).toBe('/opt/unbounded/agent/bin');
        const rejoined = await waitForProductStatus(
          host,
          (s) => s.startup.gate === 'open',
          120_000,
        );
        expect(rejoined.hostRoot.state).toBe('installed');
        expect(await shell(host, 'find /usr/local -name "aks-flex-node*" | sort')).toBe('');
        // The rejoin's start ran with the config reset kept, the Go scripts' own.
        expect(await shell(host, 'cat /etc/aks-flex-node/config.json')).toBe(goScriptConfig.trim());

        // The rejoined agent provisions the node again; uninstall.sh removes it too.
        const again = await layOutRealNode(host, { config: false });
        await startRealNodeMachines(host);
        const uninstall = await runScript(host, 'uninstall.sh', ['--force']);
        expect(uninstall.exitCode, `${uninstall.stdout}${uninstall.stderr}`).toBe(0);
        expect(uninstall.stdout).toContain('Reset completed');
        await expectNothingOfTheAgent(host);
        await expectRealNodeGone(host, again);
        await waitForUnitState(host, productUnits.agent, 'inactive');
        expect(await parentSnapshot(host)).toBe(parentBefore);
        expect(await shell(host, 'stat -c %a /opt/unbounded')).toBe('750');
      },
    );
  }, 900_000);
});
