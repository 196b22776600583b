import { z } from 'zod';
import { agentConfigSchema, type AgentConfig } from './agent-config-schema.js';
import { AgentError } from '@aks-flex-node/log';
import { readConfigJson } from './read-config-json.js';

/** Reads and validates the config file. Throws INVALID_CONFIG naming the file and the field. */
export async function readAgentConfig(configPath: string): Promise<AgentConfig> {
  return validateAgentConfig(await readConfigJson(configPath), configPath);
}

/** Validates a config's parsed JSON read from `configPath` against the schema. */
export function validateAgentConfig(json: unknown, configPath: string): AgentConfig {
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
