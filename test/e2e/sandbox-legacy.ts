// `pnpm sandbox --legacy`: a host as a release before the host root left it
// is taken over by this build (linked), then moved into a real
// /opt/unbounded/agent by an AgentUpgrade to a second build, step by step,
// with the layout, the units and `aks-flex-node status` after each step.
import { statusResponseSchema } from '@aks-flex-node/api';
import type { Host, ReleaseArchive } from './harness/index.js';
import {
  copyReleaseIn,
  formatCommandResult,
  productPaths,
  productUnits,
  readLayoutTree,
  readProductStatus,
  waitForUnitState,
} from './harness/index.js';
import { switchInOverLegacyRelease } from './harness/legacy-host.js';

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

async function showStep(host: Host, heading: string): Promise<void> {
  print(`\n=== ${heading} ===\n--- layout ---\n${await readLayoutTree(host)}`);
  const units = await host.run([
    '/bin/bash',
    '-c',
    'grep -H "^ExecStart=" /etc/systemd/system/aks-flex-node-agent*.service /etc/systemd/system/aks-flex-node-upgrade-guard.service 2>/dev/null',
  ]);
  print(`--- the units run ---\n${units.stdout.trim()}`);
  const status = await host.run([productPaths.installedBinary, 'status'], { timeoutMs: 30_000 });
  print(`--- aks-flex-node status ---\n${formatCommandResult('aks-flex-node status', status)}`);
}

/** Polls status until `accept` holds (or 4 minutes pass), so each step is shown settled. */
async function waitUntil(
  host: Host,
  accept: (gate: string, state: string) => boolean,
): Promise<void> {
  const deadline = Date.now() + 240_000;
  while (Date.now() < deadline) {
    try {
      const status = statusResponseSchema.parse(await readProductStatus(host));
      if (accept(status.startup.gate, status.hostRoot.state)) return;
    } catch {
      // Between daemons: ask again.
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error('the daemon did not settle within 4 minutes');
}

export async function runLegacySandbox(host: Host, secondBuild: ReleaseArchive): Promise<void> {
  print(`sandbox host ${host.name} booted (${host.variant}, ${host.bootState()})`);
  await switchInOverLegacyRelease(host);
  await waitForUnitState(host, productUnits.agent, 'active');
  await waitUntil(host, (gate) => gate === 'open');
  await showStep(
    host,
    '1. an earlier release under /usr/local, this build switched in by its AgentUpgrade: linked, not moved (last-good predates the host root)',
  );

  const url = await copyReleaseIn(host, secondBuild);
  const argv = [productPaths.installedBinary, 'agent-upgrade', '--url', url];
  const upgrade = await host.run([...argv, '--sha256', secondBuild.sha256], { timeoutMs: 180_000 });
  print(`\n${formatCommandResult(`${argv.join(' ')} --sha256 …`, upgrade)}`);
  if (upgrade.exitCode !== 0) throw new Error(`the AgentUpgrade exited ${upgrade.exitCode}`);
  await waitUntil(host, (gate, state) => gate === 'open' && state === 'installed');
  await showStep(
    host,
    `2. upgraded to ${secondBuild.version}: pass 1 copied the files and restarted from the copy, pass 2 removed them from /usr/local`,
  );

  await host.reboot();
  await waitForUnitState(host, productUnits.agent, 'active');
  await waitUntil(host, (gate) => gate === 'open');
  await showStep(host, '3. after a reboot: still running from /opt/unbounded/agent');
}
