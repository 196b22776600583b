import type { Host } from './host.js';
import { readJournal } from './journal.js';
import { readLayoutTree } from './layout-tree.js';
import { diagnosedUnits } from './product-names.js';

/**
 * What a failed scenario prints: the journals of the agent, recovery and
 * first-boot units and the layout tree. Collecting must not throw, because
 * it runs while another error is already on its way out.
 */
export async function collectDiagnostics(
  host: Host,
  units: readonly string[] = diagnosedUnits,
): Promise<string> {
  const sections: string[] = [];
  for (const unit of units) {
    sections.push(
      `--- journal of ${unit} ---\n${await describeSafely(() => readJournal(host, unit))}`,
    );
  }
  sections.push(
    `--- layout on ${host.name} ---\n${await describeSafely(() => readLayoutTree(host))}`,
  );
  return sections.join('\n');
}

async function describeSafely(read: () => Promise<string>): Promise<string> {
  try {
    return await read();
  } catch (err) {
    return `(could not collect: ${String(err)})`;
  }
}
