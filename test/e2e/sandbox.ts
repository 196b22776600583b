// `pnpm sandbox` (scripts/sandbox.sh bundles and runs this file): boots a
// plain host, installs the built product as an operator would, upgrades it
// to a second build and then to a candidate that cannot serve, which is
// rolled back, resets it and rejoins, and shows the layout and
// `aks-flex-node status` after each step. The harness tears the host down on exit, on Ctrl-C and on SIGTERM.
//
// Usage: node sandbox.mjs --release-dir DIR --release-version VERSION
// (DIR holds the second build's archive, as scripts/build.mjs writes it), or
// node sandbox.mjs --ignition --work-dir DIR (sandbox-ignition.ts); with
// --legacy, a host an earlier release installed is taken over and moved
// (sandbox-legacy.ts).
import { parseArgs } from 'node:util';
import { statusResponseSchema } from '@aks-flex-node/api';
import type { Host, ReleaseArchive } from './harness/index.js';
import { runIgnitionSandbox } from './sandbox-ignition.js';
import { runLegacySandbox } from './sandbox-legacy.js';
import {
  copyIn,
  copyReleaseIn,
  downloadedBinary,
  formatCommandResult,
  isProductBuilt,
  packBadCandidate,
  productBinary,
  productPaths,
  productSkipMessage,
  productUnits,
  readLayoutTree,
  readOperationRecords,
  readProductStatus,
  readReleaseArchive,
  runOrThrow,
  sweepStaleMachines,
  waitForServingDaemon,
  waitForStartSequence,
  waitForUnitState,
  withHost,
  refuseSharedNetwork,
} from './harness/index.js';

/** The archives the sandbox upgrades to. */
interface SandboxReleases {
  readonly secondBuild: ReleaseArchive;
  readonly badCandidate: ReleaseArchive;
}

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

/** Runs `aks-flex-node agent-upgrade` without --json, so it prints its phase lines, and prints them. */
async function runAgentUpgradeCommand(host: Host, release: ReleaseArchive): Promise<number> {
  const url = await copyReleaseIn(host, release);
  const argv = [productPaths.installedBinary, 'agent-upgrade', '--url', url];
  const result = await host.run([...argv, '--sha256', release.sha256], { timeoutMs: 120_000 });
  print(`\n${formatCommandResult(`${argv.join(' ')} --sha256 …`, result)}`);
  return result.exitCode;
}

async function installAndReboot(host: Host): Promise<void> {
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

async function upgradeToSecondBuild(host: Host, release: ReleaseArchive): Promise<void> {
  const exitCode = await runAgentUpgradeCommand(host, release);
  if (exitCode !== 0) throw new Error(`the AgentUpgrade to ${release.version} exited ${exitCode}`);
  await waitForUnitState(host, productUnits.agent, 'active');
  await showStep(host, `5. upgraded to ${release.version}`, productPaths.installedBinary);
}

/**
 * The guard, running the last-good binary, rolls the candidate back; a
 * status poll beside the command measures how long the host went unserved.
 */
async function upgradeToBadCandidate(host: Host, release: ReleaseArchive): Promise<void> {
  const before = statusResponseSchema.parse(await readProductStatus(host));
  const [exitCode, lastGood] = await Promise.all([
    runAgentUpgradeCommand(host, release),
    waitForServingDaemon(host, {
      executable: before.daemon.executable,
      otherThanPid: before.daemon.pid,
    }),
  ]);
  const record = (await readOperationRecords(host)).find(
    (operation) => operation.toVersion === release.version,
  );
  const switchedAt = Date.parse(record?.switchedAt ?? '');
  print(
    `\nagent-upgrade exited ${exitCode}; the operation record says ${record?.state ?? '(none)'}\n` +
      `last-good (${before.daemon.executable}) serving again ` +
      `${((lastGood.answeredAtMs - switchedAt) / 1000).toFixed(1)} s after the switch`,
  );
  await waitForUnitState(host, productUnits.agent, 'active');
  await showStep(
    host,
    `6. an upgrade to ${release.version}, which cannot serve, rolled back`,
    productPaths.installedBinary,
  );
}

/**
 * Reset through the daemon (it records the outcome and stops itself), then
 * a rejoin: the binary reset kept starts the agent again.
 */
async function resetAndRejoin(host: Host): Promise<void> {
  await refuseSharedNetwork(host, 'a reset');
  // The last-good daemon answers before its start sequence has run; a reset
  // asked for meanwhile is refused (exit 4), so wait as its hint says to.
  await waitForStartSequence(host);
  const argv = [productPaths.installedBinary, 'reset'];
  const reset = await host.run(argv, { timeoutMs: 120_000 });
  print(`\n${formatCommandResult(argv.join(' '), reset)}`);
  if (reset.exitCode !== 0) throw new Error(`reset exited ${reset.exitCode}`);
  await waitForUnitState(host, productUnits.agent, 'inactive', { timeoutMs: 60_000 });
  const units = await host.run([
    'bash',
    '-c',
    'ls /etc/systemd/system | grep -E "aks-flex-node|unbounded" || echo "(no agent unit left)"',
  ]);
  print(`--- agent units ---\n${units.stdout.trim()}`);
  await showStep(
    host,
    '7. reset: units and helpers gone, the binary kept',
    productPaths.installedBinary,
  );

  const start = await runOrThrow(host, [productPaths.installedBinary, 'start'], {
    timeoutMs: 180_000,
  });
  print(`\n${formatCommandResult(`${productPaths.installedBinary} start`, start)}`);
  await waitForUnitState(host, productUnits.agent, 'active');
  await showStep(host, '8. rejoined with aks-flex-node start', productPaths.installedBinary);
}

async function runSandbox(host: Host, releases: SandboxReleases): Promise<void> {
  print(`sandbox host ${host.name} booted (${host.variant}, ${host.bootState()})`);
  await installAndReboot(host);
  await upgradeToSecondBuild(host, releases.secondBuild);
  await upgradeToBadCandidate(host, releases.badCandidate);
  await resetAndRejoin(host);
}

const { values: flags } = parseArgs({
  options: {
    'release-dir': { type: 'string' },
    'release-version': { type: 'string' },
    ignition: { type: 'boolean', default: false },
    legacy: { type: 'boolean', default: false },
    'work-dir': { type: 'string' },
  },
});

async function readReleases(): Promise<SandboxReleases | undefined> {
  const values = flags;
  const dir = values['release-dir'];
  const version = values['release-version'];
  if (dir === undefined || version === undefined) return undefined;
  return {
    secondBuild: await readReleaseArchive(dir, version),
    badCandidate: await packBadCandidate(dir, 'exits-at-once'),
  };
}

async function main(): Promise<number> {
  const swept = sweepStaleMachines();
  if (swept.length > 0) print(`removed machines an earlier run left: ${swept.join(', ')}`);
  if (!isProductBuilt()) {
    process.stderr.write(`sandbox: ${productSkipMessage}\n`);
    return 1;
  }
  const started = Date.now();
  if (flags.ignition) {
    const workDir = flags['work-dir'];
    if (workDir === undefined) {
      process.stderr.write('usage: sandbox.mjs --ignition --work-dir DIR\n');
      return 2;
    }
    const code = await runIgnitionSandbox(workDir);
    print(
      `\nsandbox: done in ${((Date.now() - started) / 1000).toFixed(0)} s; the host is powered off and removed`,
    );
    return code;
  }
  const releases = await readReleases();
  if (releases === undefined) {
    process.stderr.write('usage: sandbox.mjs --release-dir DIR --release-version VERSION\n');
    return 2;
  }
  await withHost({ name: 'sandbox' }, (host) =>
    flags.legacy ? runLegacySandbox(host, releases.secondBuild) : runSandbox(host, releases),
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  print(`\nsandbox: done in ${seconds} s; the host is powered off and removed`);
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
