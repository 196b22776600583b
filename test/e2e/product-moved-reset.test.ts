import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { operationSchema, statusResponseSchema, type StatusResponse } from '@aks-flex-node/api';
import { describeWithProduct } from './harness/describe-with-product.js';
import type { Host } from './harness/index.js';
import {
  copyIn,
  copyScriptsIn,
  createReleaseDir,
  expectNothingOfTheAgent,
  expectResetHost,
  installAndStart,
  layOutFixture,
  packGoNamedArchive,
  parentSnapshot,
  productBinary,
  productPaths,
  productUnits,
  readProductStatus,
  runOrThrow,
  runScript,
  stageParent,
  waitForUnitState,
  withHost,
} from './harness/index.js';

// A host an earlier release installed under /usr/local, moved by this build
// into a real /opt/unbounded/agent at its own start (both slots are this
// build, so the move is ready at once: no AgentUpgrade is needed to push an
// earlier release out of last-good), then the agent's reset, a rejoin with
// install.sh and `start`, and uninstall.sh, under real systemd. The host's
// /opt/unbounded (its own mode, an artifact, an operator's file) must come
// out of every step exactly as it went in.

const legacyLib = '/usr/local/lib/aks-flex-node';

// The agent unit an earlier release wrote, naming /usr/local.
const olderAgentUnit = `[Unit]
Description=AKS Flex Node Agent
After=network-online.target
OnFailure=aks-flex-node-agent-recovery.service
StartLimitIntervalSec=300
StartLimitBurst=5

[Service]
Type=simple
ExecStart=${legacyLib}/aks-flex-node-current agent --config /etc/aks-flex-node/config.json
Restart=on-failure
RestartSec=30

[Install]
WantedBy=multi-user.target
`;

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
    '/etc/aks-flex-node/config.json': { kind: 'file', content: '{}\n', mode: 0o600 },
    '/etc/systemd/system/aks-flex-node-agent.service': { kind: 'file', content: olderAgentUnit },
  });
  await copyIn(host, productBinary, `${legacyLib}/aks-flex-node-blue`, 0o755);
  await runOrThrow(host, ['systemctl', 'daemon-reload']);
  await runOrThrow(host, ['systemctl', 'enable', '--now', productUnits.agent]);
}

async function waitForStatus(
  host: Host,
  accept: (status: StatusResponse) => boolean,
  timeoutMs: number,
): Promise<StatusResponse> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const seen = statusResponseSchema.parse(await readProductStatus(host));
      if (accept(seen)) return seen;
      last = seen;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error(`status never matched on ${host.name}; last: ${JSON.stringify(last)}`);
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
    await withHost({ variant: 'plain', name: 'moved-reset' }, async (host) => {
      await copyScriptsIn(host, archive);
      await runOrThrow(host, ['bash', '-c', stageParent]);
      const parentBefore = await parentSnapshot(host);

      await layOutLegacyHostOfThisBuild(host);
      const moved = await waitForStatus(
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

      // Reset through the daemon, which records the outcome and stops itself.
      const reset = await host.run([productPaths.installedBinary, 'reset', '--json'], {
        timeoutMs: 120_000,
      });
      expect(reset.exitCode, `${reset.stdout}${reset.stderr}`).toBe(0);
      const operation = operationSchema.parse(
        JSON.parse(reset.stdout.trim().split('\n').at(-1) ?? ''),
      );
      expect(operation).toMatchObject({ kind: 'reset', state: 'succeeded' });
      expect(operation.keptBinary).toBe(productPaths.installedBinary);
      await expectResetHost(host);
      // Nothing of the agent came back under /usr/local, and the host root is a real directory still.
      expect(
        await shell(host, 'find /usr/local -name "aks-flex-node*" -o -name "unbounded-*" | sort'),
      ).toBe('');
      expect(await parentSnapshot(host)).toBe(parentBefore);

      // The rejoin finds the layout reset kept under the host root, not /usr/local.
      const dir = await installAndStart(host, 'rejoin');
      expect(dir).toBe('/opt/unbounded/agent/bin');
      const rejoined = await waitForStatus(host, (s) => s.startup.gate === 'open', 120_000);
      expect(rejoined.hostRoot.state).toBe('installed');
      expect(await shell(host, 'find /usr/local -name "aks-flex-node*" | sort')).toBe('');

      const uninstall = await runScript(host, 'uninstall.sh', ['--force']);
      expect(uninstall.exitCode, `${uninstall.stdout}${uninstall.stderr}`).toBe(0);
      expect(uninstall.stdout).toContain('Reset completed');
      await expectNothingOfTheAgent(host);
      await waitForUnitState(host, productUnits.agent, 'inactive');
      expect(await parentSnapshot(host)).toBe(parentBefore);
      expect(await shell(host, 'stat -c %a /opt/unbounded')).toBe('750');
    });
  }, 900_000);
});
