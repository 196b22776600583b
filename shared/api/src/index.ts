export { activationPlanSchema, activationResultSchema } from './activation.js';
export type { ActivationPlan, ActivationResult, ActivationServicePlan } from './activation.js';
export { createApiClient } from './client.js';
export type { ApiClient, ApiClientOptions } from './client.js';
export { unreachableReason } from './daemon-errors.js';
export { exitCodes, scriptExitCodes } from './exit-codes.js';
export type { ExitCodeName } from './exit-codes.js';
export { errorTable, exitCodeFor, httpStatusFor } from './error-table.js';
export type { ErrorRow } from './error-table.js';
export {
  hostRootResponseSchema,
  hostRootStates,
  migrateRequestSchema,
  migrateResponseSchema,
} from './host-root.js';
export type { HostRootResponse, MigrateResponse } from './host-root.js';
export { errorCodeSchema, problemContentType, problemSchema } from './problem.js';
export { problemFromError } from './problem-from-error.js';
export { apiRoutes, requestBodyLimitBytes, requestBodyLimitText, routePath } from './routes.js';
export { resetRequestSchema } from './reset.js';
export type { ResetRequest } from './reset.js';
export { parseNspawnMachine } from './nspawn-machine.js';
export {
  nspawnMachineParamsSchema,
  regenerateNspawnHooksRequestSchema,
  regenerateNspawnHooksResponseSchema,
} from './nspawn.js';
export type { RegenerateNspawnHooksResponse } from './nspawn.js';
export { daemonStartingReason, machineCopyStatusSchema, statusResponseSchema } from './status.js';
export type { MachineCopyStatus, StatusResponse } from './status.js';
export { capabilities } from './capabilities.js';
export { versionInfoSchema } from './version.js';
export type { VersionInfo } from './version.js';
export {
  agentUpgradeRequestSchema,
  isTerminalOperationState,
  operationEventSchema,
  operationKindSchema,
  operationKinds,
  operationParamsSchema,
  operationListSchema,
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
  OperationList,
  OperationEvent,
  OperationKind,
  OperationParams,
  OperationState,
  RecoveryResponse,
  UpgradeSignal,
} from './upgrade.js';
