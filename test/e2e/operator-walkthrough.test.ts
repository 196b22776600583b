import { createHash } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exitCodes, scriptExitCodes } from '@aks-flex-node/api';
import { describeWithProduct } from './harness/describe-with-product.js';
import type { Host, ReleaseArchive, TerminalResult } from './harness/index.js';
import {
  buildSecondRelease,
  copyReleaseIn,
  copyScriptsIn,
  createReleaseDir,
  ctrlC,
  expectNothingOfTheAgent,
  openTerminal,
  packBadCandidate,
  packGoNamedArchive,
  productPaths,
  productUnits,
  readSlotLinks,
  refuseSharedNetwork,
  releaseArchiveFile,
  runOrThrow,
  waitForStartSequence,
  waitForUnitState,
  waitForUpgradeSettled,
  withHost,
} from './harness/index.js';

// issue 24, "an e2e walkthrough on a TTY": an operator's day on one real
// systemd host (the default real-shaped node), every command typed at a
// terminal (util-linux `script` inside the host: harness/terminal.ts says
// why), each exit code checked against the one table
// (shared/api/src/error-table.ts, which docs/cli.md is tested against) and
// each message against what docs/cli.md, docs/upgrades.md and
// docs/usage/operations.md quote. On the terminal the operator must see
// sentences: no JSON, no stack trace, and no control sequence but the
// progress bar's. The checks are soft (expect.soft): one booted host is
// the cost of a run, so a run reports every place the terminal and the docs
// part ways, not only the first; a step the next one needs still throws.

// The version the upgrade files share, so the run builds it once
// (test/support/shared-second-builds.ts); any version but the first build's will do.
const secondVersion = '0.2.0-e2e';
const agent = productPaths.installedBinary;
const scriptsDir = '/var/tmp/aks-flex-node-scripts';
const archiveUrl = `file://${scriptsDir}/${releaseArchiveFile}`;
/** A release server on the host's loopback that sends half the archive and then nothing. */
const stalledUrl = `http://127.0.0.1:8089/${releaseArchiveFile}`;

/** What a terminal may show besides text: the progress bar's redraws and readline's prompt. */
const barEscapes = new Set([
  '\x1b7',
  '\x1b8',
  '\x1b[?25l',
  '\x1b[?25h',
  '\x1b[?7l',
  '\x1b[?7h',
  '\x1b[1G',
  '\x1b[0K',
]);

/** The scripts colour their message labels on a terminal (only there). */
const scriptColours = new Set(['\x1b[0m', '\x1b[0;31m', '\x1b[0;32m', '\x1b[1;33m', '\x1b[0;34m']);

/** No JSON, no stack trace, no API route, no control sequence outside the bar's. */
function expectReadable(result: TerminalResult, escapes: ReadonlySet<string> = new Set()): void {
  const context = `${result.screen}\n(raw: ${JSON.stringify(result.transcript)})`;
  expect.soft(result.screen, context).not.toMatch(/^\s*[[{]"/m);
  expect.soft(result.screen, context).not.toMatch(/^\s+at \S.*:\d+:\d+\)?$/m);
  // eslint-disable-next-line no-control-regex -- an escape left on the screen is the garbage looked for
  expect.soft(result.screen, context).not.toMatch(/\x1b/);
  expect.soft(result.screen, context).not.toMatch(/\b(GET|POST|DELETE) \/v1\//);
  expect
    .soft(
      result.escapes.filter((escape) => !escapes.has(escape)),
      context,
    )
    .toEqual([]);
}

/** Runs a command at a terminal to its end. */
async function atTerminal(
  host: Host,
  argv: readonly string[],
  env?: Readonly<Record<string, string>>,
): Promise<TerminalResult> {
  return openTerminal(host, argv, env === undefined ? {} : { env }).ended;
}

function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Serves `archive` on 127.0.0.1:8089 by systemd socket activation: headers, half the bytes, then a stall. */
async function serveStalled(host: Host, archive: string): Promise<void> {
  await runOrThrow(
    host,
    String.raw`cat >/var/tmp/stall-server.sh <<'EOF'
#!/bin/bash
# One connection: read the request line, send headers and half the archive, then stall.
read -r _
size=$(stat -c %s ${archive})
printf 'HTTP/1.1 200 OK\r\nContent-Type: application/gzip\r\nContent-Length: %s\r\n\r\n' "$size"
head -c $((size / 2)) ${archive}
exec sleep 600
EOF
cat >/etc/systemd/system/stall-server.socket <<'EOF'
[Socket]
ListenStream=127.0.0.1:8089
Accept=yes
EOF
cat >/etc/systemd/system/stall-server@.service <<'EOF'
[Service]
ExecStart=/bin/bash /var/tmp/stall-server.sh
StandardInput=socket
StandardOutput=socket
StandardError=journal
EOF
systemctl daemon-reload && systemctl start stall-server.socket`,
  );
}

/** The running upgrade's id from the `operation:` line of `status`, on a terminal. */
async function runningUpgradeId(host: Host): Promise<string> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const status = await atTerminal(host, [agent, 'status']);
    expect.soft(status.exitCode, status.screen).toBe(0);
    expectReadable(status);
    const id =
      /^operation: {2}(upgrade-\S+) \(agent-upgrade\) running, phase downloading, [\d.]+\/[\d.]+ MiB$/m.exec(
        status.screen,
      )?.[1];
    if (id !== undefined) return id;
  }
  throw new Error(`status on ${host.name} never showed the running upgrade`);
}

describeWithProduct('an operator at a terminal: install to uninstall (issue 24)', () => {
  let releaseDir = '';
  let installArchive = '';
  let second: ReleaseArchive | undefined;
  let exitsAtOnce: ReleaseArchive | undefined;
  let hangs: ReleaseArchive | undefined;

  beforeAll(async () => {
    releaseDir = await createReleaseDir();
    await mkdir(path.join(releaseDir, 'install'));
    installArchive = await packGoNamedArchive(path.join(releaseDir, 'install'));
    second = await buildSecondRelease(secondVersion, path.join(releaseDir, 'second'));
    exitsAtOnce = await packBadCandidate(releaseDir, 'exits-at-once');
    hangs = await packBadCandidate(releaseDir, 'hangs');
  }, 300_000);

  afterAll(async () => {
    if (releaseDir !== '') await rm(releaseDir, { recursive: true, force: true });
  });

  it('issue24 walkthrough: install.sh --sha256, start, status, upgrades, Ctrl-C, --cancel, operations, reset, rejoin, uninstall.sh', async () => {
    if (second === undefined || exitsAtOnce === undefined || hangs === undefined) {
      throw new Error('the releases were not built');
    }
    const [goodRelease, badRelease, hangingRelease] = [second, exitsAtOnce, hangs];
    const installDigest = sha256Of(await readFile(installArchive));
    await withHost({ name: 'tty' }, async (host) => {
      await refuseSharedNetwork(host, 'the walkthrough, which resets and uninstalls');
      await copyScriptsIn(host, installArchive);
      const scriptEnv = { AKS_FLEX_NODE_DOWNLOAD_URL: archiveUrl };

      // install.sh from a file:// URL: a wrong digest first (65, both digests named), then the right one.
      const wrong = '0'.repeat(64);
      const refused = await atTerminal(
        host,
        ['bash', `${scriptsDir}/install.sh`, '--sha256', wrong],
        scriptEnv,
      );
      expect.soft(refused.exitCode, refused.screen).toBe(scriptExitCodes.badInput.code);
      expectReadable(refused, scriptColours);
      expect.soft(refused.screen).toContain(wrong);
      expect.soft(refused.screen).toContain(installDigest);
      const install = await atTerminal(
        host,
        ['bash', `${scriptsDir}/install.sh`, '--sha256', installDigest],
        scriptEnv,
      );
      expect.soft(install.exitCode, install.screen).toBe(0);
      expectReadable(install, scriptColours);
      // The "Next steps" are what the operator types next, as printed.
      const startLine = /2\. Start the agent: +(\S+) (start --config \S+)$/m.exec(install.screen);
      expect.soft(startLine, install.screen).not.toBeNull();
      expect.soft(install.screen).toMatch(new RegExp(`3\\. Check it: +${agent} status$`, 'm'));
      const [, installed = '', startArgs = ''] = startLine ?? [];

      // start, then status.
      const start = await atTerminal(host, [installed, ...startArgs.split(' ')]);
      expect.soft(start.exitCode, start.screen).toBe(0);
      expectReadable(start);
      const status = await atTerminal(host, [agent, 'status']);
      expect.soft(status.exitCode, status.screen).toBe(0);
      expectReadable(status);
      expect
        .soft(status.screen)
        .toMatch(
          /^daemon: {5}running \(pid \d+, up \d+s, socket \/run\/aks-flex-node\/agent\.sock from systemd\)$/m,
        );
      expect.soft(status.screen).toMatch(/^activation: idle$/m);
      // Right after start the daemon may still be settling; both are what status documents.
      expect.soft(status.screen).toMatch(/^startup: {4}takes (no )?changes/m);
      expect.soft(status.screen).not.toMatch(/^(operation|last):/m);

      // An upgrade: the bar on the terminal, sizes to one decimal, the result once.
      const goodUrl = await copyReleaseIn(host, goodRelease);
      const upgrade = await atTerminal(host, [
        agent,
        'agent-upgrade',
        '--url',
        goodUrl,
        '--sha256',
        goodRelease.sha256,
      ]);
      expect.soft(upgrade.exitCode, upgrade.screen).toBe(exitCodes.ok.code);
      expectReadable(upgrade, barEscapes);
      expect.soft(upgrade.screen).toMatch(/\| 100% \d+\.\d\/\d+\.\d MiB$/m);
      expect.soft(upgrade.transcript).not.toMatch(/\d\.\d{2,}\/|\/0\.1 MiB/);
      expect
        .soft(upgrade.screen)
        .toMatch(new RegExp(`^AgentUpgrade upgrade-\\S+ to ${secondVersion} succeeded$`, 'm'));

      // A failing upgrade: rolled back, exit 6, the error says why and only then names the journal.
      const badUrl = await copyReleaseIn(host, badRelease, '/var/tmp/exits-at-once.tar.gz');
      const failed = await atTerminal(host, [agent, 'agent-upgrade', '--url', badUrl]);
      expect.soft(failed.exitCode, failed.screen).toBe(exitCodes.rolledBack.code);
      expectReadable(failed, barEscapes);
      expect
        .soft(failed.screen)
        .toMatch(
          /^error: AgentUpgrade (upgrade-\S+) to 9\.9\.9-bad was rolled back to the last-good binary: /m,
        );
      expect
        .soft(failed.screen)
        .toMatch(
          /^hint: see `journalctl -u aks-flex-node-agent` for why the candidate failed, and `\/opt\/unbounded\/agent\/bin\/aks-flex-node operations upgrade-\S+` for the record$/m,
        );
      expect.soft(failed.screen.match(/^error: /gm)).toHaveLength(1);

      // Ctrl-C before the switch, during a download that stalls halfway: cancelled, exit 10.
      await serveStalled(host, '/var/tmp/release.tar.gz');
      const interrupted = openTerminal(host, [agent, 'agent-upgrade', '--url', stalledUrl]);
      await interrupted.waitFor(/downloading +\|[^|]*\| +\d+% [\d.]+\/[\d.]+ MiB/);
      interrupted.type(ctrlC);
      const cancelled = await interrupted.ended;
      expect.soft(cancelled.exitCode, cancelled.screen).toBe(exitCodes.cancelled.code);
      expectReadable(cancelled, barEscapes);
      expect
        .soft(cancelled.screen)
        .toMatch(/^cancelling AgentUpgrade upgrade-\S+ \(Ctrl-C again to stop waiting\)$/m);
      expect.soft(cancelled.screen).toMatch(/^error: AgentUpgrade upgrade-\S+ cancelled: /m);
      expect.soft(cancelled.screen).toMatch(/^hint: nothing changed; /m);

      // Cancel by id from a second terminal: status shows the id, --cancel exits 0,
      // the first terminal says cancelled and exits 10, and operations ID shows the record.
      const followed = openTerminal(host, [agent, 'agent-upgrade', '--url', stalledUrl]);
      await followed.waitFor(/downloading/);
      const id = await runningUpgradeId(host);
      const listed = await atTerminal(host, [agent, 'operations']);
      expect.soft(listed.exitCode, listed.screen).toBe(0);
      expectReadable(listed);
      expect
        .soft(listed.screen)
        .toMatch(
          new RegExp(`^running: {2}${id} \\(agent-upgrade\\) running, phase downloading`, 'm'),
        );
      const cancel = await atTerminal(host, [agent, 'agent-upgrade', '--cancel', id]);
      expect.soft(cancel.exitCode, cancel.screen).toBe(exitCodes.ok.code);
      expectReadable(cancel);
      expect.soft(cancel.screen).toMatch(new RegExp(`^AgentUpgrade ${id} cancelled: `, 'm'));
      const byId = await followed.ended;
      expect.soft(byId.exitCode, byId.screen).toBe(exitCodes.cancelled.code);
      expect.soft(byId.screen).toMatch(new RegExp(`^error: AgentUpgrade ${id} cancelled: `, 'm'));
      const record = await atTerminal(host, [agent, 'operations', id]);
      expect.soft(record.exitCode, record.screen).toBe(0);
      expectReadable(record);
      expect
        .soft(record.screen)
        .toMatch(new RegExp(`^${id} \\(agent-upgrade\\) failed at \\S+`, 'm'));
      expect.soft(record.screen).toMatch(/^ {2}code: +OPERATION_CANCELLED$/m);
      expect
        .soft(record.screen)
        .toMatch(
          /^ {2}hint: +start it again with `\/opt\/unbounded\/agent\/bin\/aks-flex-node agent-upgrade --url URL` when wanted$/m,
        );

      // Ctrl-C after the switch: the upgrade goes on (here to its rollback), the command says so, exit 11.
      // The terminal echoes ^C where the cursor was, so the error may follow it on its line.
      const before = await readSlotLinks(host);
      const hangsUrl = await copyReleaseIn(host, hangingRelease, '/var/tmp/hangs.tar.gz');
      const switching = openTerminal(host, [agent, 'agent-upgrade', '--url', hangsUrl]);
      const switchBy = Date.now() + 60_000;
      while ((await readSlotLinks(host)).current === before.current) {
        if (Date.now() > switchBy) throw new Error(`no switch:\n${switching.transcript()}`);
        await sleep(100);
      }
      switching.type(ctrlC);
      const goesOn = await switching.ended;
      expect.soft(goesOn.exitCode, goesOn.screen).toBe(exitCodes.timedOut.code);
      expectReadable(goesOn, barEscapes);
      const abandoned =
        /^(?:\^C)?error: AgentUpgrade (upgrade-\S+) has switched to the new binary, so Ctrl-C no longer cancels it; it goes on without this command/m.exec(
          goesOn.screen,
        );
      expect.soft(abandoned, goesOn.screen).not.toBeNull();
      const switchedId = abandoned?.[1] ?? '';
      expect.soft(goesOn.screen).toContain(`${agent} operations ${switchedId}`);
      const settled = await waitForUpgradeSettled(host, switchedId, 60_000);
      expect.soft(settled.state).toBe('rolled-back');
      const after = await atTerminal(host, [agent, 'operations', switchedId]);
      expect.soft(after.exitCode, after.screen).toBe(0);
      expect
        .soft(after.screen)
        .toMatch(new RegExp(`^${switchedId} \\(agent-upgrade\\) rolled-back`, 'm'));

      // operations: every finished one, newest first, as lines.
      const all = await atTerminal(host, [agent, 'operations']);
      expect.soft(all.exitCode, all.screen).toBe(0);
      expectReadable(all);
      expect.soft(all.screen.match(/^finished: upgrade-/gm)).toHaveLength(5);
      expect.soft(all.screen).not.toMatch(/^running:/m);

      // reset at the prompt, answered y; then rejoin with start.
      await waitForUnitState(host, productUnits.agent, 'active');
      await waitForStartSequence(host);
      const reset = openTerminal(host, [agent, 'reset']);
      await reset.waitFor(/Reset this host\? \(y\/N\): /);
      reset.type('y\r');
      const resetDone = await reset.ended;
      expect.soft(resetDone.exitCode, resetDone.screen).toBe(0);
      // readline's prompt: erase below, and the cursor after "Reset this host? (y/N): ".
      expectReadable(resetDone, new Set([...barEscapes, '\x1b[0J', '\x1b[25G']));
      expect.soft(resetDone.screen).toMatch(/^Reset succeeded: /m);
      const rejoin = await atTerminal(host, [agent, 'start']);
      expect.soft(rejoin.exitCode, rejoin.screen).toBe(0);
      expectReadable(rejoin);
      await waitForUnitState(host, productUnits.agent, 'active');
      // The rejoined daemon shows the reset as the last operation, from its record, once settled.
      let rejoined = await atTerminal(host, [agent, 'status']);
      for (let tries = 0; tries < 20 && !/^last: /m.test(rejoined.screen); tries += 1) {
        await sleep(500);
        rejoined = await atTerminal(host, [agent, 'status']);
      }
      expect.soft(rejoined.exitCode, rejoined.screen).toBe(0);
      expect.soft(rejoined.screen).toMatch(/^last: {7}reset-\S+ \(reset\) succeeded/m);

      // uninstall.sh, confirmed at its prompt.
      const uninstall = openTerminal(host, ['bash', `${scriptsDir}/uninstall.sh`]);
      await uninstall.waitFor(/Are you sure you want to continue\? \(y\/N\): /);
      uninstall.type('y');
      const removed = await uninstall.ended;
      expect.soft(removed.exitCode, removed.screen).toBe(0);
      expectReadable(removed, scriptColours);
      expect.soft(removed.screen).toContain('Reset completed');
      await expectNothingOfTheAgent(host);
    });
  }, 900_000);
});
