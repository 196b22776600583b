import { AgentError, messageOf } from '@aks-flex-node/log';
import { readConfigFile } from './read-config-file.js';

/**
 * Reads a config file and parses its JSON, without the schema: the half of
 * {@link readAgentConfig} that the status command can run (its bundle holds
 * no zod). Throws INVALID_CONFIG naming the file, as readConfigFile does.
 */
export async function readConfigJson(configPath: string): Promise<unknown> {
  return parseConfigJson(await readConfigFile(configPath), configPath);
}

/**
 * Parses a config's text read from `configPath`. Throws INVALID_CONFIG naming
 * the file, with {@link configParseFailed} set, so the daemon's start can tell
 * a torn write (empty, truncated, not JSON) from a config that fails the schema.
 */
export function parseConfigJson(text: string, configPath: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const failure = new AgentError('INVALID_CONFIG', `parse ${configPath}: ${messageOf(error)}`, {
      path: configPath,
      cause: error,
      hint: 'fix the JSON syntax; `jq . ' + configPath + '` shows where it breaks',
    });
    parseFailures.add(failure);
    throw failure;
  }
}

const parseFailures = new WeakSet<AgentError>();

/** Whether `error` is {@link parseConfigJson}'s: the file's bytes are not JSON at all. */
export function configParseFailed(error: unknown): boolean {
  return error instanceof AgentError && parseFailures.has(error);
}
