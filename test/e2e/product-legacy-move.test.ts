import { expect, it } from 'vitest';
import { exitCodes } from '@aks-flex-node/api';
import { describeWithProduct } from './harness/describe-with-product.js';
import type { Host } from './harness/index.js';
import {
  copyReleaseIn,
  formatCommandResult,
  runAgentUpgrade,
  runOrThrow,
  useSecondRelease,
  waitForUnitState,
  withHost,
} from './harness/index.js';
import { goScriptConfig } from './harness/go-script-config.js';
import { waitForProductStatus } from './harness/product-status.js';
import { switchInOverLegacyRelease } from './harness/legacy-host.js';
import {
  execPaths,
  movedHelper,
  startMachineExpectingRegeneratedHooks,
} from './harness/nspawn-stand-in.js';

// A host as a release before the host root left it, taken over by this build
// through the old daemon's AgentUpgrade (linked, not moved: last-good still
// predates the host root), then moved into a real /opt/unbounded/agent by an
// AgentUpgrade to a second build, and kept there across a reboot.
const secondVersion = '0.2.0-e2e';
const movedLib = '/opt/unbounded/agent/lib/aks-flex-node';

async function shell(host: Host, script: string): Promise<string> {
  return (await runOrThrow(host, ['/bin/bash', '-c', script])).stdout.trim();
}

describeWithProduct('product: a legacy host taken over, then moved', () => {
  const secondRelease = useSecondRelease(secondVersion);

  it('linked after this build is switched in; moved by the next AgentUpgrade; still there after a reboot', async () => {
    await withHost(
      {
        variant: 'plain',
        name: 'legacy-move',
        // A release before the host root installed its helpers under /usr/local.
        node: { helperRoot: '/usr/local' },
      },
      async (host) => {
        await switchInOverLegacyRelease(host);
        await waitForUnitState(host, 'aks-flex-node-agent.service', 'active');

        // Taken over: linked, not moved, because last-good predates the host root.
        const linked = await waitForProductStatus(host, (s) => s.startup.gate === 'open', 90_000);
        expect(linked.hostRoot).toMatchObject({ state: 'linked', resolved: '/usr/local' });
        expect(linked.startup.move).toBe('not-ready');
        expect(linked.startup.reason).toMatch(/last-good/);
        expect(await shell(host, 'readlink /opt/unbounded/agent')).toBe('/usr/local');

        // The AgentUpgrade that pushes the earlier release out of last-good.
        const release = secondRelease();
        const url = await copyReleaseIn(host, release);
        const upgrade = await runAgentUpgrade(host, url, release.sha256);
        expect(
          upgrade.result.exitCode,
          formatCommandResult(`agent-upgrade --url ${url}`, upgrade.result),
        ).toBe(exitCodes.ok.code);

        const moved = await waitForProductStatus(
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
        const afterReboot = await waitForProductStatus(
          host,
          (s) => s.startup.gate === 'open',
          90_000,
        );
        expect(afterReboot.hostRoot.state).toBe('installed');
        expect(afterReboot.version.version).toBe(secondVersion);
        expect(afterReboot.daemon.executable.startsWith(`${movedLib}/`)).toBe(true);
        await expectMovedLayout(host);

        // The machine's start runs pre-start, which asks the moved daemon; the
        // hooks keep naming the helper under the host root.
        await startMachineExpectingRegeneratedHooks(host);
        const loaded = await execPaths(host);
        expect(loaded.preStart).toContain(`path=${movedHelper} `);
        expect(loaded.postStart).toContain(`path=${movedHelper} `);
        // The Go-rendered config came through the take-over, the move and the reboot byte for byte.
        expect(await shell(host, 'cat /etc/aks-flex-node/config.json')).toBe(goScriptConfig.trim());
      },
    );
  }, 900_000);
});

/** A real /opt/unbounded/agent, nothing of the agent left under /usr/local, no unit running anything from it. */
async function expectMovedLayout(host: Host): Promise<void> {
  expect(
    await shell(host, 'test -d /opt/unbounded/agent && ! test -L /opt/unbounded/agent && echo dir'),
  ).toBe('dir');
  expect(
    await shell(host, 'find /usr/local -name "aks-flex-node*" -o -name "unbounded-agent*" | sort'),
  ).toBe('');
  // The move rewrote the earlier release's hooks to this release's helper under the host root.
  const hooks = await execPaths(host);
  expect(hooks.preStart).toContain(`path=${movedHelper} `);
  expect(hooks.postStart).toContain(`path=${movedHelper} `);
  // Not even the confinement's write path: it is rendered only while the
  // legacy root holds files of the agent (docs/hardening.md). The legacy root
  // as a path of its own (after "=", a space or ReadWritePaths' "-"), not a
  // machine's usr/local/bin under /var/lib/machines, which the units may write.
  expect(
    await shell(
      host,
      "grep -rlE '(^|[[:space:]=-])/usr/local' /etc/systemd/system/ 2>/dev/null | sort || true",
    ),
  ).toBe('');
  expect(await shell(host, `readlink -f ${movedLib}/aks-flex-node-current`)).toMatch(
    new RegExp(`^${movedLib}/aks-flex-node-(blue|green)$`),
  );
}
