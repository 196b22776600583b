export { agentConfigSchema, defaultAgentConfig, readAgentConfig } from './config.js';
export type { AgentConfig } from './config.js';
export { maxConfigBytes, readConfigFile } from './read-config-file.js';
