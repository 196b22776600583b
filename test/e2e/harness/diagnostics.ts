import type { Host } from './host.js';
import { readJournal } from './journal.js';
import { readLayoutTree } from './layout-tree.js';
import { diagnosedUnits } from './product-names.js';

/**
 * What a failed scenario prints: for the agent, recovery and first-boot
 * units, the command line each runs and its journal, then the layout tree.
 * The command line is there because the journal alone may not name it: when
 * exec fails, systemd's "Failed to execute" line can reach the journal after
 * the report is taken. Collecting must not throw, because it runs while
 * another error is already on its way out.
 */
export async function collectDiagnostics(
  host: Host,
  units: readonly string[] = diagnosedUnits,
): Promise<string> {
  const sections: string[] = [];
  for (const unit of units) {
    sections.push(
      `--- ExecStart of ${unit} ---\n${await describeSafely(() => readExecStart(host, unit))}`,
    );
    sections.push(
      `--- journal of ${unit} ---\n${await describeSafely(() => readJournal(host, unit))}`,
    );
  }
  sections.push(
    `--- layout on ${host.name} ---\n${await describeSafely(() => readLayoutTree(host))}`,
  );
  return sections.join('\n');
}

/** What systemd runs for the unit, as `systemctl show` reports it ('' for a unit it does not know). */
async function readExecStart(host: Host, unit: string): Promise<string> {
  const result = await host.run(['systemctl', 'show', '--property=ExecStart', '--value', unit]);
  return `${result.stdout}${result.stderr}`.trimEnd() || '(none)';
}

async function describeSafely(read: () => Promise<string>): Promise<string> {
  try {
    return await read();
  } catch (err) {
    return `(could not collect: ${String(err)})`;
  }
}
