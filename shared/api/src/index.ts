export { activationPlanSchema, activationResultSchema } from './activation.js';
export type { ActivationPlan, ActivationResult, ActivationServicePlan } from './activation.js';
export { createApiClient } from './client.js';
export type { ApiClient } from './client.js';
export { exitCodeFor, exitCodes, scriptExitCodes } from './exit-codes.js';
export {
  hostRootResponseSchema,
  hostRootStates,
  migrateRequestSchema,
  migrateResponseSchema,
} from './host-root.js';
export type { HostRootResponse, MigrateResponse } from './host-root.js';
export { problemContentType, problemFromError, problemSchema } from './problem.js';
export { apiRoutes, requestBodyLimitBytes, requestBodyLimitText } from './routes.js';
export { daemonStartingReason, statusResponseSchema } from './status.js';
export type { StatusResponse } from './status.js';
export { capabilities, versionInfoSchema } from './version.js';
export type { VersionInfo } from './version.js';
export {
  agentUpgradeRequestSchema,
  isTerminalOperationState,
  operationEventSchema,
  operationSchema,
  recoveryRequestSchema,
  recoveryResponseSchema,
  upgradeSignalSchema,
} from './upgrade.js';
export type {
  AgentUpgradeRequest,
  ArchiveSource,
  BinarySource,
  Operation,
  OperationEvent,
  OperationState,
  RecoveryResponse,
  UpgradeSignal,
} from './upgrade.js';
