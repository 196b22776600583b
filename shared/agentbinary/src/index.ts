export { agentBinaryPathsUnder } from './agent-binary-paths.js';
export type { AgentBinaryPaths } from './agent-binary-paths.js';
export { ensureAgentBinaryLayout, isRegularExecutable } from './ensure-layout.js';
export type { LayoutResult } from './ensure-layout.js';
export { installHostBinary } from './install-host-binary.js';
export type { InstallHostBinaryOptions } from './install-host-binary.js';
export { resolveIfPresent } from './resolve-link.js';
