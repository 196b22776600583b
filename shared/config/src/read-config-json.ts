import { AgentError, messageOf } from '@aks-flex-node/log';
import { readConfigFile } from './read-config-file.js';

/**
 * Reads a config file and parses its JSON, without the schema: the half of
 * {@link readAgentConfig} that the status command can run (its bundle holds
 * no zod). Throws INVALID_CONFIG naming the file, as readConfigFile does.
 */
export async function readConfigJson(configPath: string): Promise<unknown> {
  const text = await readConfigFile(configPath);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new AgentError('INVALID_CONFIG', `parse ${configPath}: ${messageOf(error)}`, {
      path: configPath,
      cause: error,
      hint: 'fix the JSON syntax; `jq . ' + configPath + '` shows where it breaks',
    });
  }
}
