// `pnpm sandbox` (scripts/sandbox.sh bundles and runs this file): boots a
// plain host, installs the built product as an operator would, and shows
// the layout and `aks-flex-node status` after each step. The harness tears
// the host down on exit, on Ctrl-C and on SIGTERM.
import type { Host } from './harness/index.js';
import {
  copyIn,
  downloadedBinary,
  formatCommandResult,
  isProductBuilt,
  productBinary,
  productPaths,
  productSkipMessage,
  productUnits,
  readLayoutTree,
  runOrThrow,
  sweepStaleMachines,
  waitForUnitState,
  withHost,
} from './harness/index.js';

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Prints a step's heading, the layout tree and what `status` says with the given executable. */
async function showStep(host: Host, heading: string, executable: string): Promise<void> {
  print(`\n=== ${heading} ===\n--- layout ---\n${await readLayoutTree(host)}`);
  const present = await host.run(['test', '-x', executable]);
  if (present.exitCode !== 0) {
    print(`--- aks-flex-node status ---\n(${executable} is not on the host yet)`);
    return;
  }
  const status = await host.run([executable, 'status'], { timeoutMs: 30_000 });
  print(`--- aks-flex-node status ---\n${formatCommandResult(`${executable} status`, status)}`);
}

async function runSandbox(host: Host): Promise<void> {
  print(`sandbox host ${host.name} booted (${host.variant}, ${host.bootState()})`);
  await showStep(host, '1. a fresh host', downloadedBinary);

  await copyIn(host, productBinary, downloadedBinary);
  await showStep(host, `2. the executable copied to ${downloadedBinary}`, downloadedBinary);

  const start = await runOrThrow(host, [downloadedBinary, 'start'], { timeoutMs: 180_000 });
  print(`\n${formatCommandResult(`${downloadedBinary} start`, start)}`);
  await waitForUnitState(host, productUnits.agent, 'active');
  await showStep(host, '3. installed with aks-flex-node start', productPaths.installedBinary);

  await host.reboot();
  await waitForUnitState(host, productUnits.agent, 'active');
  await showStep(host, '4. after a reboot', productPaths.installedBinary);
}

async function main(): Promise<number> {
  const swept = sweepStaleMachines();
  if (swept.length > 0) print(`removed machines an earlier run left: ${swept.join(', ')}`);
  if (!isProductBuilt()) {
    process.stderr.write(`sandbox: ${productSkipMessage}\n`);
    return 1;
  }
  await withHost({ name: 'sandbox' }, runSandbox);
  print('\nsandbox: done; the host is powered off and removed');
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`sandbox: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
