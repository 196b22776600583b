/**
 * The stable error codes. The code is the contract with scripts and the API;
 * the wording of messages may change without breaking anyone. What each code
 * means, and the HTTP status and exit code it carries, is one table:
 * `errorTable` in shared/api, the only package that translates a code.
 */
export const allErrorCodes = [
  // Input
  'INVALID_ARGUMENT',
  'REQUEST_TOO_LARGE',
  'INVALID_CONFIG',
  // Host root
  'HOST_ROOT_REFUSED',
  'HOST_ROOT_IO',
  // Concurrency
  'ACTIVATION_IN_PROGRESS',
  'DAEMON_RUNNING',
  // Daemon access
  'DAEMON_UNREACHABLE',
  'DAEMON_ERROR',
  // Upgrade
  'UPGRADE_REFUSED',
  'FETCH_FAILED',
  'UPGRADE_FAILED',
  'NOT_FOUND',
  // Environment
  'NOT_EXECUTABLE',
  'SYSTEMD_FAILED',
  'HOST_NETWORK_FAILED',
  'CREDENTIAL_FAILED',
  // Azure services (Entra ID, managed identity endpoints, Azure Resource Manager)
  'REMOTE_UNAVAILABLE',
  'REMOTE_REFUSED',
  'INTERNAL',
  // Privileges
  'NOT_ROOT',
  // Requests and operations
  'OPERATION_NOT_CANCELLABLE',
  'OPERATION_CANCELLED',
  'OPERATION_TIMED_OUT',
  'REQUEST_TIMEOUT',
  'REQUEST_HEADERS_TOO_LARGE',
  // Daemon start-up
  'DAEMON_NOT_READY',
] as const;

/** A stable error code from {@link allErrorCodes}. */
export type ErrorCode = (typeof allErrorCodes)[number];
