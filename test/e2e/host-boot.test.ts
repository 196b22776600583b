import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { Host } from './harness/index.js';
import {
  layOutFixture,
  readJournal,
  runOrThrow,
  waitForJournal,
  waitForUnitState,
  withHost,
} from './harness/index.js';
import { cgroupHierarchies, machineCgroupParent } from './harness/machine-cgroup.js';
import { sleeperUnit, sleeperUnitFile } from './self-test-fixtures.js';

const harnessOnly = { empty: 'a check of the harness itself, which runs without a product build' };

describe('harness: a booted host runs real systemd', () => {
  it.each(['plain', 'acl'] as const)(
    '%s host: boots, and a unit installed in it becomes active',
    async (variant) => {
      await withHost({ variant, name: 'boot', node: harnessOnly }, async (host) => {
        // A degraded boot names the units that failed, so a flake explains itself.
        const failed = await host.run(['systemctl', '--failed', '--no-legend', '--plain']);
        expect(host.bootState(), `failed units:\n${failed.stdout}`).toBe('running');
        await layOutFixture(host, { [sleeperUnitFile]: { kind: 'file', content: sleeperUnit } });
        await runOrThrow(host, 'systemctl daemon-reload && systemctl start e2e-sleeper.service');
        const state = await waitForUnitState(host, 'e2e-sleeper.service', 'active');
        expect(state.subState).toBe('running');
      });
    },
  );

  // Two hosts at once is the normal case (two test files run side by side),
  // and the product's units have the same names on every host. Each host's
  // systemd must see only its own processes in a unit's cgroup: when two
  // hosts shared one cgroup tree, one host read the other's pids as 0
  // ("Failed to kill control group … Input/output error") and its units
  // failed with 219/CGROUP or hung in start-pre.
  it('two hosts running a unit of the same name each see only their own process in its cgroup', async () => {
    const names: string[] = [];
    await withHost({ name: 'cgroup-a', node: harnessOnly }, async (first) => {
      await withHost({ name: 'cgroup-b', node: harnessOnly }, async (second) => {
        names.push(first.name, second.name);
        for (const host of [first, second]) {
          await runOrThrow(host, ['systemd-run', '--unit=e2e-same-name', '/bin/sleep', 'infinity']);
        }
        for (const host of [first, second]) {
          const mainPid = await runOrThrow(host, [
            'systemctl',
            'show',
            '-P',
            'MainPID',
            'e2e-same-name',
          ]);
          const seen = await readUnitCgroupProcs(host, 'e2e-same-name.service');
          expect(seen.length, `no cgroup.procs found for the unit on ${host.name}`).toBeGreaterThan(
            0,
          );
          for (const { file, pids } of seen) {
            expect(pids, `${file} on ${host.name}`).toEqual([mainPid.stdout.trim()]);
          }
        }
        // Stopping it on one host must neither fail there nor touch the other's.
        await runOrThrow(first, ['systemctl', 'stop', 'e2e-same-name']);
        const other = await second.run(['systemctl', 'is-active', 'e2e-same-name']);
        expect(other.stdout.trim()).toBe('active');
        const journal = await runOrThrow(first, ['journalctl', '--no-pager', '-o', 'cat']);
        expect(journal.stdout).not.toMatch(/Failed to kill control group/);
      });
    });
    // Teardown removes each machine's cgroup with the machine.
    const left = cgroupHierarchies().flatMap((root) =>
      readdirSync(path.join(root, machineCgroupParent)).filter((entry) =>
        names.includes(entry.toLowerCase()),
      ),
    );
    expect(left).toEqual([]);
  });

  it('a host has no Node.js and no network but loopback', async () => {
    await withHost({ name: 'isolation', node: harnessOnly }, async (host) => {
      expect((await host.run('command -v node nodejs')).exitCode).not.toBe(0);
      const links = await runOrThrow(host, 'ls /sys/class/net');
      expect(links.stdout.trim().split(/\s+/)).toEqual(['lo']);
      const virt = await runOrThrow(host, ['systemd-detect-virt', '--container']);
      expect(virt.stdout.trim()).toBe('systemd-nspawn');
    });
  });

  it('run reports exit code, stdout and stderr separately', async () => {
    await withHost({ name: 'run', node: harnessOnly }, async (host) => {
      const result = await host.run('echo out; echo err >&2; exit 7');
      expect(result).toEqual({ exitCode: 7, stdout: 'out\n', stderr: 'err\n' });
      const piped = await host.run(['cat'], { input: 'through stdin' });
      expect(piped.stdout).toBe('through stdin');
    });
  });

  // A unit's stdout reaches the journal when journald reads the stream, which
  // may be after the unit is reported finished; tests that expect a line wait.
  it('waitForJournal waits for a line that comes late, and gives back the journal when it never comes', async () => {
    await withHost({ name: 'journal', node: harnessOnly }, async (host) => {
      await runOrThrow(host, [
        'systemd-run',
        '--no-block',
        '--unit=e2e-late-line',
        'sh',
        '-c',
        // Spelled so the command line systemd logs holds neither line.
        'x=line; echo "first $x"; sleep 2; echo "late $x"',
      ]);
      const early = await readJournal(host, 'e2e-late-line.service');
      expect(early).not.toContain('late line');
      const late = await waitForJournal(host, 'e2e-late-line.service', 'late line');
      expect(late).toContain('first line');
      expect(late).toContain('late line');
      const never = await waitForJournal(host, 'e2e-late-line.service', 'never logged', {
        timeoutMs: 1000,
      });
      expect(never).toContain('late line');
      expect(never).not.toContain('never logged');
    });
  });
});

/**
 * The pids in a unit's cgroup as the host's own systemd sees them, in every
 * hierarchy it keeps one in: on a hybrid layout that is both name=systemd
 * and the unified tree, and systemd reads both when it stops a unit.
 */
async function readUnitCgroupProcs(
  host: Host,
  unit: string,
): Promise<{ readonly file: string; readonly pids: string[] }[]> {
  const cgroup = (
    await runOrThrow(host, ['systemctl', 'show', '-P', 'ControlGroup', unit])
  ).stdout.trim();
  const seen = [];
  for (const root of ['/sys/fs/cgroup/systemd', '/sys/fs/cgroup/unified', '/sys/fs/cgroup']) {
    const file = `${root}${cgroup}/cgroup.procs`;
    const read = await host.run(['cat', file]);
    if (read.exitCode === 0) seen.push({ file, pids: read.stdout.trim().split('\n') });
  }
  return seen;
}
