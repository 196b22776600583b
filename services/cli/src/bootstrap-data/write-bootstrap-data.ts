import { writeFileAtomic } from '@aks-flex-node/fs';
import { AgentError, messageOf } from '@aks-flex-node/log';
import type { BootstrapData } from './list-bootstrap-data.js';

/**
 * Writes the join data to `output` as indented JSON, mode 0600, through a
 * synced temp file renamed into place: it holds a bootstrap token, so it is
 * never group or world readable, not even for the moment between create
 * and chmod, and a crash leaves either no file or the whole one.
 */
export async function writeBootstrapData(output: string, data: BootstrapData): Promise<void> {
  try {
    await writeFileAtomic(output, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  } catch (error) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `write bootstrap data to ${output}: ${messageOf(error)}`,
      {
        path: output,
        cause: error,
        hint: 'give --output a path in a directory root can write',
      },
    );
  }
}
