import type { Host } from './host.js';

/**
 * A unit's journal across every boot of the host, oldest first. The
 * journal is persistent and the machine id fixed, so entries from before a
 * reboot are included.
 */
export async function readJournal(host: Host, unit: string, lines = 200): Promise<string> {
  const result = await host.run([
    'journalctl',
    `--unit=${unit}`,
    `--lines=${String(lines)}`,
    '--no-pager',
    '--no-hostname',
    '--output=short-precise',
  ]);
  const text = `${result.stdout}${result.stderr}`.trimEnd();
  return text === '' ? '-- No entries --' : text;
}
