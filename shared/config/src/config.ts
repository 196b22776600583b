import { z } from 'zod';
import { AgentError, messageOf } from '@aks-flex-node/log';
import { readConfigFile } from './read-config-file.js';

/**
 * `/etc/aks-flex-node/config.json`. Earlier releases keep their Azure and
 * Kubernetes settings in the same file, so unknown top-level sections are
 * kept, not refused; the sections this product reads are validated strictly.
 */
export const agentConfigSchema = z.looseObject({
  agent: z
    .strictObject({
      logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).optional(),
    })
    .optional(),
});
export type AgentConfig = z.infer<typeof agentConfigSchema>;

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

/** The config `start` writes when the host has none. */
export const defaultAgentConfig: AgentConfig = { agent: { logLevel: 'info' } };
