import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exitCodes, statusResponseSchema, type StatusResponse } from '@aks-flex-node/api';
import { describeWithProduct } from './harness/describe-with-product.js';
import type { Host, ReleaseArchive } from './harness/index.js';
import {
  buildSecondRelease,
  copyIn,
  copyReleaseIn,
  createReleaseDir,
  formatCommandResult,
  layOutFixture,
  readProductStatus,
  runAgentUpgrade,
  runOrThrow,
  waitForUnitState,
  withHost,
} from './harness/index.js';
import { productBinary } from './harness/product.js';

// A host as a release before the host root left it, taken over by this build
// through the old daemon's AgentUpgrade (linked, not moved: last-good still
// predates the host root), then moved into a real /opt/unbounded/agent by an
// AgentUpgrade to a second build, and kept there across a reboot.
const secondVersion = '0.2.0-e2e';
const legacyLib = '/usr/local/lib/aks-flex-node';
const movedLib = '/opt/unbounded/agent/lib/aks-flex-node';

// The earlier release, as far as this host can tell: it answers `version`
// without --json or a host-root capability, and as a daemon it just runs.
const standIn = `#!/bin/sh
case "$1" in
  version) echo "aks-flex-node v0.9.0" ;;
  agent|daemon) exec sleep infinity ;;
  *) echo "unknown command $1" >&2; exit 1 ;;
esac
`;

// The units the earlier release wrote, naming /usr/local.
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
const olderRecoveryUnit = `[Unit]
Description=Recover AKS Flex Node Agent to last-known-good binary

[Service]
Type=oneshot
ExecStart=${legacyLib}/aks-flex-node-recovery.sh
`;

async function status(host: Host): Promise<StatusResponse> {
  return statusResponseSchema.parse(await readProductStatus(host));
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
      const seen = await status(host);
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

describeWithProduct('product: a legacy host taken over, then moved', () => {
  let releaseDir: string | undefined;
  let release: ReleaseArchive;
  beforeAll(async () => {
    releaseDir = await createReleaseDir();
    release = await buildSecondRelease(secondVersion, releaseDir);
  }, 300_000);
  afterAll(async () => {
    if (releaseDir !== undefined) await rm(releaseDir, { recursive: true, force: true });
  });

  it('linked after this build is switched in; moved by the next AgentUpgrade; still there after a reboot', async () => {
    await withHost({ variant: 'plain', name: 'legacy-move' }, async (host) => {
      // The earlier release's layout, after its AgentUpgrade switched this build into green.
      await layOutFixture(host, {
        [`${legacyLib}/aks-flex-node-blue`]: { kind: 'file', content: standIn, mode: 0o755 },
        [`${legacyLib}/aks-flex-node-current`]: {
          kind: 'symlink',
          target: `${legacyLib}/aks-flex-node-green`,
        },
        [`${legacyLib}/aks-flex-node-last-good`]: {
          kind: 'symlink',
          target: `${legacyLib}/aks-flex-node-blue`,
        },
        '/etc/aks-flex-node/config.json': { kind: 'file', content: '{}\n', mode: 0o600 },
        '/etc/systemd/system/aks-flex-node-agent.service': {
          kind: 'file',
          content: olderAgentUnit,
        },
        '/etc/systemd/system/aks-flex-node-agent-recovery.service': {
          kind: 'file',
          content: olderRecoveryUnit,
        },
      });
      await copyIn(host, productBinary, `${legacyLib}/aks-flex-node-green`, 0o755);
      await copyIn(host, productBinary, '/usr/local/bin/aks-flex-node', 0o755);
      await runOrThrow(host, ['systemctl', 'daemon-reload']);
      await runOrThrow(host, ['systemctl', 'enable', '--now', 'aks-flex-node-agent.service']);
      await waitForUnitState(host, 'aks-flex-node-agent.service', 'active');

      // Taken over: linked, not moved, because last-good predates the host root.
      const linked = await waitForStatus(host, (s) => s.startup.gate === 'open', 90_000);
      expect(linked.hostRoot).toMatchObject({ state: 'linked', resolved: '/usr/local' });
      expect(linked.startup.move).toBe('not-ready');
      expect(linked.startup.reason).toMatch(/last-good/);
      expect(await shell(host, 'readlink /opt/unbounded/agent')).toBe('/usr/local');

      // The AgentUpgrade that pushes the earlier release out of last-good.
      const url = await copyReleaseIn(host, release);
      const upgrade = await runAgentUpgrade(host, url, release.sha256);
      expect(
        upgrade.result.exitCode,
        formatCommandResult(`agent-upgrade --url ${url}`, upgrade.result),
      ).toBe(exitCodes.ok.code);

      const moved = await waitForStatus(
        host,
        (s) => s.hostRoot.state === 'installed' && s.startup.gate === 'open',
        240_000,
      );
      expect(moved.startup.move).toBe('moved');
      expect(moved.version.version).toBe(secondVersion);
      expect(moved.daemon.executable.startsWith(`${movedLib}/`)).toBe(true);
      await expectMovedLayout(host);

      await host.reboot();
      await waitForUnitState(host, 'aks-flex-node-agent.service', 'active');
      const afterReboot = await waitForStatus(host, (s) => s.startup.gate === 'open', 90_000);
      expect(afterReboot.hostRoot.state).toBe('installed');
      expect(afterReboot.version.version).toBe(secondVersion);
      expect(afterReboot.daemon.executable.startsWith(`${movedLib}/`)).toBe(true);
      await expectMovedLayout(host);
    });
  }, 900_000);
});

/** A real /opt/unbounded/agent, nothing of the agent left under /usr/local, no unit naming it. */
async function expectMovedLayout(host: Host): Promise<void> {
  expect(
    await shell(host, 'test -d /opt/unbounded/agent && ! test -L /opt/unbounded/agent && echo dir'),
  ).toBe('dir');
  expect(await shell(host, 'find /usr/local -name "aks-flex-node*" | sort')).toBe('');
  expect(
    await shell(host, 'grep -rl /usr/local /etc/systemd/system/ 2>/dev/null | sort || true'),
  ).toBe('');
  expect(await shell(host, `readlink -f ${movedLib}/aks-flex-node-current`)).toMatch(
    new RegExp(`^${movedLib}/aks-flex-node-(blue|green)$`),
  );
}
