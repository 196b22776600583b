export { agentConfigSchema, defaultAgentConfig } from './agent-config-schema.js';
export type { AgentConfig } from './agent-config-schema.js';
export { readAgentConfig, validateAgentConfig } from './config.js';
export { describeUnknownConfigKey, findUnknownConfigKeys } from './unknown-keys.js';
export type { UnknownConfigKey } from './unknown-keys.js';
export { maxConfigBytes, readConfigFile } from './read-config-file.js';
export { configParseFailed, parseConfigJson, readConfigJson } from './read-config-json.js';
