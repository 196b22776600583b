import { expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import type { Host } from './harness/index.js';
import {
  copyIn,
  formatCommandResult,
  readJournal,
  runOrThrow,
  waitForUnitState,
  withHost,
  writeHostFile,
} from './harness/index.js';
import { goScriptConfig } from './harness/go-script-config.js';
import { downloadedBinary, productBinary } from './harness/product.js';
import { waitForProductStatus } from './harness/product-status.js';

// A host an install script of an earlier release set up: a plain binary in
// /usr/local/bin, no blue/green layout, and a plain unit running it with
// no socket. Two shapes: that binary is an earlier release (its daemon does
// not answer this build's socket), or this very build (the earlier
// release's install.sh downloaded it).
const seed = '/usr/local/bin/aks-flex-node';
const installed = '/opt/unbounded/agent/bin/aks-flex-node';

const plainUnit = `[Unit]
Description=AKS Flex Node Agent
After=network-online.target

[Service]
Type=simple
ExecStart=${seed} agent
Restart=always
RestartSec=5

[Install]
WantedBy=multi-user.target
`;

// An earlier release as far as this host can tell: its daemon just runs.
const earlierRelease = `#!/bin/sh
case "$1" in
  version) echo "aks-flex-node v0.9.0" ;;
  agent|daemon) exec sleep infinity ;;
  *) echo "unknown command $1" >&2; exit 1 ;;
esac
`;

async function layOutPlainHost(host: Host): Promise<void> {
  await writeHostFile(host, '/etc/aks-flex-node/config.json', goScriptConfig, 0o600);
  await writeHostFile(host, '/etc/systemd/system/aks-flex-node-agent.service', plainUnit);
  await runOrThrow(
    host,
    'systemctl daemon-reload && systemctl enable --now aks-flex-node-agent.service',
  );
  await waitForUnitState(host, 'aks-flex-node-agent.service', 'active');
}

async function shell(host: Host, script: string): Promise<string> {
  return (await runOrThrow(host, ['/bin/bash', '-c', script])).stdout.trim();
}

/** Socket and service active, the daemon from the host root answering with its gate open. */
async function expectTakenOver(host: Host): Promise<void> {
  expect(
    await shell(host, 'systemctl is-active aks-flex-node-agent.socket aks-flex-node-agent.service'),
  ).toBe('active\nactive');
  const status = await waitForProductStatus(host, (s) => s.startup.gate === 'open', 90_000);
  expect(status.daemon.socket).toBe('systemd');
  expect(status.daemon.executable.startsWith('/opt/unbounded/agent/')).toBe(true);
  // The daemon running from the host root removed the copy in /usr/local/bin.
  expect(await shell(host, `test -e ${seed} && echo present || echo gone`)).toBe('gone');
}

describeWithProduct(
  'product: a plain binary in /usr/local/bin and its running unit, taken over',
  () => {
    it('an earlier release runs: preflight names start, and start stops it and brings up socket and service', async () => {
      await withHost({ variant: 'plain', name: 'plain-earlier' }, async (host) => {
        await writeHostFile(host, seed, earlierRelease, 0o755);
        await layOutPlainHost(host);
        await copyIn(host, productBinary, downloadedBinary, 0o755);

        // Nothing to upgrade in place yet: it names the start that takes the host over, runnable as printed.
        const preflight = await host.run([downloadedBinary, 'agent-upgrade', '--preflight']);
        expect
          .soft(preflight.stderr, formatCommandResult('agent-upgrade --preflight', preflight))
          .toContain(`\`${downloadedBinary} start\``);

        const start = await host.run([downloadedBinary, 'start'], { timeoutMs: 180_000 });
        expect(start.exitCode, formatCommandResult('start', start)).toBe(0);
        expect(start.stdout).toContain('the agent is installed and running');
        await expectTakenOver(host);
        // The earlier release's daemon is gone, not left beside the new one.
        expect(await shell(host, 'pgrep -x sleep || true')).toBe('');
      });
    }, 600_000);

    it('this build runs from /usr/local/bin: the daemon keeps that copy while it runs from it, and start moves it onto the socket', async () => {
      await withHost({ variant: 'plain', name: 'plain-this' }, async (host) => {
        await copyIn(host, productBinary, seed, 0o755);
        await layOutPlainHost(host);

        // The daemon's start sequence has run (gate open) and kept its own executable.
        const running = await waitForProductStatus(host, (s) => s.startup.gate === 'open', 90_000);
        expect(running.daemon.socket).toBe('self-bound');
        expect(await shell(host, `test -f ${seed} && echo present`)).toBe('present');
        const status = await host.run([seed, 'status']);
        expect(status.exitCode, formatCommandResult('status', status)).toBe(0);
        expect(await readJournal(host, 'aks-flex-node-agent.service')).not.toContain('ENOENT');

        const start = await host.run([seed, 'start'], { timeoutMs: 180_000 });
        expect(start.exitCode, formatCommandResult('start', start)).toBe(0);
        await expectTakenOver(host);
        expect(await shell(host, `${installed} status >/dev/null && echo ok`)).toBe('ok');
      });
    }, 600_000);
  },
);
