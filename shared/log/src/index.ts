export { AgentError, errnoCode, isAgentError, isNotFound, messageOf } from './agent-error.js';
export type { AgentErrorDetails } from './agent-error.js';
export { allErrorCodes } from './error-codes.js';
export type { ErrorCode } from './error-codes.js';
export { createLogger, createLoggerCalling, createSilentLogger } from './logger.js';
export type { Logger } from './logger.js';
