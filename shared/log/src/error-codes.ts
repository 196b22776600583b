/**
 * The one catalogue of error codes. The code is the contract with scripts and
 * the API; the wording of messages may change without breaking anyone.
 * shared/api maps each code to an HTTP status and an exit code.
 */
export const errorCodes = {
  // Input
  INVALID_ARGUMENT: 'a command-line argument or request field is not acceptable',
  REQUEST_TOO_LARGE: 'a request body is over the size limit',
  INVALID_CONFIG: 'the configuration file is missing, unreadable or malformed',
  // Host root
  HOST_ROOT_REFUSED: 'the host root is in a state the agent refuses to change',
  HOST_ROOT_IO: 'reading or changing the host root failed',
  // Concurrency
  ACTIVATION_IN_PROGRESS: 'another activation holds the activation lock',
  DAEMON_RUNNING: 'another daemon already serves the socket',
  // Daemon access
  DAEMON_UNREACHABLE: 'the daemon did not answer on its socket',
  DAEMON_ERROR: 'the daemon answered with an error',
  // Upgrade
  UPGRADE_REFUSED: 'an upgrade candidate or archive was refused before switching',
  UPGRADE_FAILED: 'an upgrade failed after it started',
  NOT_FOUND: 'the thing asked for does not exist',
  // Environment
  NOT_EXECUTABLE: 'a binary does not run where it is installed',
  SYSTEMD_FAILED: 'a systemctl command failed',
  HOST_NETWORK_FAILED: "an ip or nft command on the node's network state failed",
  CREDENTIAL_FAILED:
    'an Azure credential gave no token: its setting, file or token service (Entra ID, IMDS, Arc) failed',
  INTERNAL: 'an unexpected internal error',
  // Privileges
  NOT_ROOT: 'the command changes the host and must run as root',
  // Requests and operations
  OPERATION_NOT_CANCELLABLE: 'the operation has switched or ended and can no longer be cancelled',
  REQUEST_TIMEOUT: 'a request did not arrive in time',
  REQUEST_HEADERS_TOO_LARGE: "a request's URL or headers are over the size limit",
  // Daemon start-up
  DAEMON_NOT_READY:
    'the daemon serves reads but takes no changes yet: it is starting, moving its files or waiting to be replaced',
} as const;

/** A stable error code from {@link errorCodes}. */
export type ErrorCode = keyof typeof errorCodes;

/** Every code, in catalogue order, for tables and exhaustive tests. */
export const allErrorCodes = Object.keys(errorCodes) as ErrorCode[];
