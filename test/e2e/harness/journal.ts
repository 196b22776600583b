import { setTimeout as sleep } from 'node:timers/promises';
import type { Host } from './host.js';

/**
 * A unit's journal across every boot of the host, oldest first. The
 * journal is persistent and the machine id fixed, so entries from before a
 * reboot are included.
 *
 * It asks journald to sync first, so what was logged before the call is on
 * disk. That is not enough for a line a unit's process wrote to stdout just
 * before it exited: journald reads that stream when it gets to it, and
 * systemd may report the unit finished first (systemd/systemd#28650). A
 * test that expects such a line waits for it with `waitForJournal`.
 */
export async function readJournal(host: Host, unit: string, lines = 200): Promise<string> {
  return journalOf(host, unit, { lines });
}

async function journalOf(
  host: Host,
  unit: string,
  { lines = 200, since }: JournalWait,
): Promise<string> {
  const synced = await host.run(['journalctl', '--sync']);
  const result = await host.run([
    'journalctl',
    `--unit=${unit}`,
    `--lines=${String(lines)}`,
    ...(since === undefined ? [] : [`--since=${since}`]),
    '--no-pager',
    '--no-hostname',
    '--output=short-precise',
  ]);
  const text = `${result.stdout}${result.stderr}`.trimEnd();
  const journal = text === '' ? '-- No entries --' : text;
  // A failed sync is said with the journal rather than thrown: the journal
  // is still what the caller asserts on, and diagnostics read it too.
  return synced.exitCode === 0
    ? journal
    : `${journal}\n-- journalctl --sync failed (${String(synced.exitCode)}): ${synced.stderr.trim()}`;
}

export interface JournalWait {
  /** How many of the unit's last lines to read each time. */
  lines?: number;
  /** Only entries from this time on, as `journalctl --since` takes it (`@<epoch seconds>`). */
  since?: string;
  timeoutMs?: number;
}

/**
 * Reads a unit's journal until it holds `expected`, and returns it. On
 * timeout it returns the journal as last read, so the caller's assertion
 * fails showing what was there. A unit's last lines can reach the journal
 * after the unit is reported finished (see `readJournal`); this is the
 * wait for them, never a reason to accept a line that does not come.
 */
export async function waitForJournal(
  host: Host,
  unit: string,
  expected: string | RegExp | ((journal: string) => boolean),
  { timeoutMs = 15_000, ...which }: JournalWait = {},
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const journal = await journalOf(host, unit, which);
    const found =
      typeof expected === 'string'
        ? journal.includes(expected)
        : expected instanceof RegExp
          ? expected.test(journal)
          : expected(journal);
    if (found || Date.now() >= deadline) return journal;
    await sleep(250);
  }
}
