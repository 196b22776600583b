export {
  activationPlanSchema,
  activationResultSchema,
  activationServicePlanSchema,
} from './activation.js';
export type { ActivationPlan, ActivationResult, ActivationServicePlan } from './activation.js';
export { createApiClient } from './client.js';
export type { ApiClient, ApiClientOptions } from './client.js';
export { exitCodeFor, exitCodes } from './exit-codes.js';
export type { ExitCodeName } from './exit-codes.js';
export {
  hostRootResponseSchema,
  hostRootStateSchema,
  hostRootStates,
  migrateRequestSchema,
  migrateResponseSchema,
} from './host-root.js';
export type {
  HostRootResponse,
  HostRootStateName,
  MigrateRequest,
  MigrateResponse,
} from './host-root.js';
export { httpStatusFor } from './http-status.js';
export {
  errorFromProblem,
  problemContentType,
  problemFromError,
  problemSchema,
} from './problem.js';
export type { Problem } from './problem.js';
export { statusResponseSchema } from './status.js';
export type { StatusResponse } from './status.js';
export { capabilities, versionInfoSchema } from './version.js';
export type { VersionInfo } from './version.js';
export {
  agentUpgradeRequestSchema,
  archiveSourceSchema,
  binarySourceSchema,
  isTerminalOperationState,
  operationEventSchema,
  operationParamsSchema,
  operationSchema,
  operationStateSchema,
  operationStates,
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
  OperationParams,
  OperationState,
  RecoveryRequest,
  RecoveryResponse,
  UpgradeSignal,
} from './upgrade.js';
