import { expect } from 'vitest';
import type { Host } from './host.js';
import { waitForJournal } from './journal.js';
import { waitForStartSequence } from './product-status.js';
import { runOrThrow } from './run-or-throw.js';
import { waitForUnitState } from './unit-state.js';

// A nested container cannot boot inside the test host, so the machine's unit
// is a stand-in: a `systemd-nspawn@.service` template in /etc (which shadows
// any packaged one) whose service only sleeps. Everything the product adds,
// the regenerate-config unit and the override drop-in, applies to it exactly
// as it would to the real template.
export const standInMachineTemplate = `[Unit]
Description=Stand-in for the nspawn machine %i

[Service]
ExecStart=/bin/sleep infinity
`;

export const units = '/etc/systemd/system';
export const legacyHelper = '/usr/local/bin/unbounded-agent-nspawn-lifecycle';
export const movedHelper = '/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle';

/** The hooks an earlier release wrote for kube1, naming its helper under /usr/local. */
export const earlierReleaseHooks = {
  unit: `[Unit]
Before=systemd-nspawn@kube1.service

[Service]
Type=oneshot
ExecStart=${legacyHelper} nspawn-lifecycle pre-start kube1
Restart=on-failure
`,
  override: `[Unit]
Wants=unbounded-agent-regenerate-config@kube1.service
After=unbounded-agent-regenerate-config@kube1.service

[Service]
ExecStartPost=${legacyHelper} nspawn-lifecycle post-start kube1
`,
};

export async function execPaths(host: Host): Promise<{ preStart: string; postStart: string }> {
  const show = async (unit: string, property: string) =>
    (await runOrThrow(host, ['systemctl', 'show', '--value', '-p', property, unit])).stdout;
  return {
    preStart: await show('unbounded-agent-regenerate-config@kube1.service', 'ExecStart'),
    postStart: await show('systemd-nspawn@kube1.service', 'ExecStartPost'),
  };
}

/**
 * Once the daemon's start sequence has run, starts kube1, which runs
 * pre-start, and expects its hook to say the daemon
 * regenerated the hooks to run the helper under the host root. Returns the
 * hook's journal. The line may reach the journal after the unit is reported
 * finished, so it is waited for.
 */
export async function startMachineExpectingRegeneratedHooks(host: Host): Promise<string> {
  // A pre-start that arrives while the daemon's start sequence holds the
  // activation lock is refused, and the machine starts on its old hooks, by
  // design (a CI run hit it: "the host-root move is running"); this is the
  // case of a daemon that is serving.
  await waitForStartSequence(host);
  await runOrThrow(host, ['systemctl', 'start', 'systemd-nspawn@kube1.service']);
  await waitForUnitState(host, 'systemd-nspawn@kube1.service', 'active');
  const regenerated = `the daemon regenerated the hooks of kube1: they run ${movedHelper}`;
  const hook = await waitForJournal(
    host,
    'unbounded-agent-regenerate-config@kube1.service',
    regenerated,
  );
  expect(hook).toContain(regenerated);
  return hook;
}
