import { statusResponseSchema } from '@aks-flex-node/api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import type { Host } from './harness/index.js';
import {
  bootHost,
  collectDiagnostics,
  formatCommandResult,
  installProduct,
  productPaths,
  productUnits,
  readJournal,
  readProductStatus,
  readUnitState,
  runOrThrow,
  waitForUnitState,
  writeHostFile,
} from './harness/index.js';
import { inspectorProbeFunctions, watchTcpListeners } from './harness/inspector-probe.js';

// Issue 28, items 1 and 4, on one booted host: no signal, environment or
// command line opens the Node.js inspector in the daemon or a CLI role (any
// local user could run code as root through it), SIGHUP and SIGUSR2 do not
// stop the daemon, and an exit nobody asked systemd for is restarted.

const cli = productPaths.installedBinary;
/** Where a unit rests once its main process has exited: restarting, or stopped for good. */
const settledAfterExit = /^(auto-restart|dead|failed)$/;
const inspectDropIn = '/run/systemd/system/aks-flex-node-agent.service.d/inspect.conf';

async function unitNumber(host: Host, property: 'MainPID' | 'NRestarts'): Promise<number> {
  const shown = await runOrThrow(host, [
    'systemctl',
    'show',
    `--property=${property}`,
    '--value',
    productUnits.agent,
  ]);
  return Number(shown.stdout.trim());
}

/** The pid of the daemon that answers `status`: the round trip also shows it serves. */
async function servingPid(host: Host): Promise<number> {
  return statusResponseSchema.parse(await readProductStatus(host)).daemon.pid;
}

/**
 * The pid of the agent unit's serving daemon, started first if an earlier
 * check left it down (as each does on a build without the fix), so every
 * check starts from a running daemon.
 */
async function runningDaemon(host: Host): Promise<number> {
  await runOrThrow(host, ['systemctl', 'reset-failed', productUnits.agent]);
  await runOrThrow(host, ['systemctl', 'start', productUnits.agent]);
  await waitForUnitState(host, productUnits.agent, 'active');
  const pid = await unitNumber(host, 'MainPID');
  expect(pid, 'the agent unit has a main process').toBeGreaterThan(0);
  // Serving: its signal handlers are in place, and no request is left queued
  // on the socket to start a daemon behind a check's back.
  expect(await servingPid(host), 'the main process serves').toBe(pid);
  return pid;
}

// The daemon is stopped (SIGSTOP) so `status` stays up, waiting on the socket
// for its answer; SIGUSR1 reaches it once it has connected, that is once its
// JavaScript runs. The daemon then resumes and answers.
const cliSigusr1Script = String.raw`${inspectorProbeFunctions}
daemon=$1
kill -STOP "$daemon"
trap 'kill -CONT "$daemon"' EXIT
"${cli}" status --json >/tmp/status.out 2>/tmp/status.err & role=$!
for _ in $(seq 100); do
  find "/proc/$role/fd" -lname 'socket:*' 2>/dev/null | grep -q . && break
  sleep 0.05
done
kill -USR1 "$role"
echo "listeners=$(watch_listeners "$role" | tr '\n' ' ')"
kill -0 "$role" && echo "alive-after-sigusr1=yes"
kill -CONT "$daemon"
wait "$role" && echo "status-exit=0" || echo "status-exit=$?"
cat /tmp/status.err`;

describeWithProduct('product: signals and the inspector', () => {
  let host: Host | undefined;
  beforeAll(async () => {
    host = await bootHost({ name: 'signals' });
    await installProduct(host);
    await waitForUnitState(host, productUnits.agent, 'active');
  }, 300_000);
  afterAll(async () => {
    await host?.dispose();
  });

  /** Runs a check on the shared host; a failure prints the host's state first. */
  async function onHost(check: (host: Host) => Promise<void>): Promise<void> {
    if (host === undefined) throw new Error('the host did not boot');
    try {
      await check(host);
    } catch (err) {
      process.stderr.write(
        `\n=== ${host.name}: check failed ===\n${await collectDiagnostics(host)}\n`,
      );
      throw err;
    }
  }

  it('issue28#1 SIGUSR1 to a running CLI role opens no inspector, and the role finishes', () =>
    onHost(async (host) => {
      // First, while no daemon of this host can have opened an inspector:
      // one on 9229, the port SIGUSR1's takes, would keep the role's from opening.
      const held = await host.run([
        '/bin/bash',
        '-c',
        "awk 'FNR > 1 && $4 == \"0A\"' /proc/net/tcp /proc/net/tcp6 | grep -i ':240D ' || true",
      ]);
      expect(held.stdout, 'a socket already listens on 9229').toBe('');
      const daemon = await runningDaemon(host);

      const run = await runOrThrow(host, [
        '/bin/bash',
        '-c',
        cliSigusr1Script,
        'cli-sigusr1',
        String(daemon),
      ]);

      expect(run.stdout).toMatch(/^listeners=$/m);
      expect(run.stdout).toContain('alive-after-sigusr1=yes');
      expect(run.stdout).toContain('status-exit=0');
      expect(run.stdout).not.toMatch(/Debugger/);
      expect(await servingPid(host)).toBe(daemon);
    }));

  it('issue28#1 SIGUSR1 to the daemon opens no inspector, and the same daemon serves on', () =>
    onHost(async (host) => {
      const pid = await runningDaemon(host);
      await runOrThrow(host, ['kill', '-USR1', String(pid)]);

      expect(await servingPid(host)).toBe(pid);
      expect(await watchTcpListeners(host, pid)).toEqual([]);
      expect(await unitNumber(host, 'MainPID')).toBe(pid);
      expect(await readJournal(host, productUnits.agent)).not.toMatch(/Debugger listening/);
    }));

  it('issue28#1 NODE_OPTIONS and --inspect on the command line open nothing, in a CLI role or the daemon', () =>
    onHost(async (host) => {
      // --inspect-brk waits for a debugger before the first line: a role that honoured it would hang.
      const version = await host.run([cli, 'version'], {
        env: { NODE_OPTIONS: '--inspect-brk=127.0.0.1:0' },
        timeoutMs: 20_000,
      });
      // Soft, so the daemon's part below runs (and shows) whatever these find.
      expect
        .soft(version.exitCode, formatCommandResult('NODE_OPTIONS=--inspect-brk version', version))
        .toBe(0);
      expect.soft(version.stderr).not.toMatch(/Debugger|inspector/i);
      for (const args of [
        ['--inspect-brk=127.0.0.1:0', 'version'],
        ['--node-options=--inspect-brk', 'version'],
        ['version', '--inspect'],
      ]) {
        const refused = await host.run([cli, ...args], { timeoutMs: 20_000 });
        expect.soft(refused.exitCode, formatCommandResult(args.join(' '), refused)).toBe(2);
        expect.soft(refused.stderr).not.toMatch(/Debugger/);
      }

      // The daemon's environment, as a drop-in or `systemctl set-environment` would give it.
      await writeHostFile(
        host,
        inspectDropIn,
        '[Service]\nEnvironment=NODE_OPTIONS=--inspect=127.0.0.1:0\n',
      );
      try {
        await runOrThrow(host, ['systemctl', 'daemon-reload']);
        await runOrThrow(host, ['systemctl', 'reset-failed', productUnits.agent]);
        await runOrThrow(host, ['systemctl', 'restart', productUnits.agent]);
        const pid = await servingPid(host);
        const environ = await runOrThrow(host, ['cat', `/proc/${pid}/environ`]);
        expect(environ.stdout.split('\0'), 'the drop-in reached the daemon').toContain(
          'NODE_OPTIONS=--inspect=127.0.0.1:0',
        );
        expect(await watchTcpListeners(host, pid)).toEqual([]);
      } finally {
        await runOrThrow(host, ['rm', '-f', inspectDropIn]);
        await runOrThrow(host, ['systemctl', 'daemon-reload']);
        await runOrThrow(host, ['systemctl', 'reset-failed', productUnits.agent]);
        await runOrThrow(host, ['systemctl', 'restart', productUnits.agent]);
      }
    }));

  it.each(['SIGHUP', 'SIGUSR2'])(
    'issue28#4 %s: the same daemon serves on, no restart, and it logs the signal',
    (signal) =>
      onHost(async (host) => {
        const pid = await runningDaemon(host);
        const restarts = await unitNumber(host, 'NRestarts');
        await runOrThrow(host, ['kill', '-s', signal.slice('SIG'.length), String(pid)]);

        expect(await servingPid(host)).toBe(pid);
        expect(await unitNumber(host, 'NRestarts')).toBe(restarts);
        await expect
          .poll(() => readJournal(host, productUnits.agent, 50), { timeout: 10_000 })
          .toMatch(new RegExp(`"signal":"${signal}".*ignored a signal`));
      }),
  );

  it(
    'issue28#4 a clean exit nobody asked systemd for (SIGTERM from outside) is restarted by systemd',
    () =>
      onHost(async (host) => {
        const pid = await runningDaemon(host);
        const restarts = await unitNumber(host, 'NRestarts');
        // The daemon takes SIGTERM as a stop and exits 0: systemd sees a clean exit.
        await runOrThrow(host, ['kill', '-TERM', String(pid)]);

        // Watched through systemctl alone: a request on the socket would start the daemon itself.
        await expect
          .poll(async () => (await readUnitState(host, productUnits.agent)).subState, {
            timeout: 20_000,
          })
          .toMatch(settledAfterExit);
        const exited = await readUnitState(host, productUnits.agent);
        // Restart=on-failure left it here as dead, until something used the socket.
        expect(exited, 'systemd schedules a restart').toMatchObject({
          subState: 'auto-restart',
          result: 'success',
        });
        // RestartSec=30.
        await waitForUnitState(host, productUnits.agent, 'active', { timeoutMs: 60_000 });
        expect(await unitNumber(host, 'NRestarts')).toBe(restarts + 1);
        const back = await servingPid(host);
        expect(back).not.toBe(pid);
      }),
    90_000,
  );
});
