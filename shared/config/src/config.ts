import { z } from 'zod';
import { agentConfigSchema, type AgentConfig } from './agent-config-schema.js';
import { AgentError, messageOf } from '@aks-flex-node/log';
import { readConfigFile } from './read-config-file.js';

/** Reads and validates the config file. Throws INVALID_CONFIG naming the file and the field. */
export async function readAgentConfig(configPath: string): Promise<AgentConfig> {
  const text = await readConfigFile(configPath);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AgentError('INVALID_CONFIG', `parse ${configPath}: ${messageOf(error)}`, {
      path: configPath,
      cause: error,
      hint: 'fix the JSON syntax; `jq . ' + configPath + '` shows where it breaks',
    });
  }
  const parsed = agentConfigSchema.safeParse(json);
  if (!parsed.success) {
    throw new AgentError(
      'INVALID_CONFIG',
      `${configPath} is not a valid config: ${z.prettifyError(parsed.error)}`,
      {
        path: configPath,
        hint: 'correct the fields named above',
      },
    );
  }
  return parsed.data;
}
