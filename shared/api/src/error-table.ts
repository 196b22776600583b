import type { ErrorCode } from '@aks-flex-node/log';
import { exitCodes, type ExitCodeName } from './exit-codes.js';

/** What one error code means, and how the API and the CLI report it. */
export interface ErrorRow {
  /** What went wrong, in general; the error's own message names the path. */
  meaning: string;
  /** The status of the API's problem+json answer. */
  httpStatus: number;
  /** The exit code of a command that fails with it, a name from {@link exitCodes}. */
  exit: ExitCodeName;
}

/**
 * The one table of error codes: each row says what the code means, the HTTP
 * status the API answers it with and the exit code a command ends with.
 * docs/api.md and docs/cli.md show it; a unit test compares them.
 */
export const errorTable = {
  // Input
  INVALID_ARGUMENT: {
    meaning: 'a command-line argument or request field is not acceptable',
    httpStatus: 400,
    exit: 'usage',
  },
  REQUEST_TOO_LARGE: {
    meaning: 'a request body is over the size limit',
    httpStatus: 413,
    exit: 'usage',
  },
  INVALID_CONFIG: {
    meaning: 'the configuration file is missing, unreadable or malformed',
    httpStatus: 400,
    exit: 'usage',
  },
  // Host root
  HOST_ROOT_REFUSED: {
    meaning: 'the host root is in a state the agent refuses to change',
    httpStatus: 409,
    exit: 'refused',
  },
  HOST_ROOT_IO: {
    meaning: 'reading or changing the host root failed',
    httpStatus: 500,
    exit: 'failure',
  },
  // Concurrency
  ACTIVATION_IN_PROGRESS: {
    meaning: 'another activation holds the activation lock',
    httpStatus: 409,
    exit: 'busy',
  },
  DAEMON_RUNNING: {
    meaning: 'another daemon already serves the socket',
    httpStatus: 409,
    exit: 'busy',
  },
  // Daemon access
  DAEMON_UNREACHABLE: {
    meaning: 'the daemon did not answer on its socket',
    httpStatus: 503,
    exit: 'noDaemon',
  },
  DAEMON_ERROR: {
    meaning: 'the daemon answered with an error',
    httpStatus: 500,
    exit: 'failure',
  },
  // Upgrade
  UPGRADE_REFUSED: {
    meaning: 'an upgrade candidate or archive was refused before switching (a wrong digest too)',
    httpStatus: 422,
    exit: 'refused',
  },
  FETCH_FAILED: {
    meaning: 'downloading or reading an upgrade archive failed before anything changed',
    httpStatus: 502,
    exit: 'fetchFailed',
  },
  UPGRADE_FAILED: {
    meaning: 'an upgrade failed after the switch and was rolled back',
    httpStatus: 500,
    exit: 'rolledBack',
  },
  NOT_FOUND: {
    meaning: 'the thing asked for does not exist',
    httpStatus: 404,
    exit: 'failure',
  },
  // Environment
  NOT_EXECUTABLE: {
    meaning: 'a binary does not run where it is installed',
    httpStatus: 500,
    exit: 'notExecutable',
  },
  SYSTEMD_FAILED: {
    meaning: 'a systemctl command failed',
    httpStatus: 503,
    exit: 'failure',
  },
  HOST_NETWORK_FAILED: {
    meaning: "an ip or nft command on the node's network state failed",
    httpStatus: 503,
    exit: 'failure',
  },
  CREDENTIAL_FAILED: {
    meaning:
      'an Azure credential gave no token: its setting, file or token service (Entra ID, IMDS, Arc) failed',
    httpStatus: 503,
    exit: 'failure',
  },
  // Azure services
  REMOTE_UNAVAILABLE: {
    meaning:
      'an Azure service could not be reached or answered with a temporary error (network, 5xx, 429)',
    httpStatus: 503,
    exit: 'fetchFailed',
  },
  REMOTE_REFUSED: {
    meaning:
      'an Azure service refused the request (401, 403 or another 4xx): the identity, its role or the target is wrong',
    httpStatus: 502,
    exit: 'denied',
  },
  INTERNAL: {
    meaning: 'an unexpected internal error',
    httpStatus: 500,
    exit: 'failure',
  },
  // Privileges
  NOT_ROOT: {
    meaning: 'the command changes the host and must run as root',
    httpStatus: 403,
    exit: 'notRoot',
  },
  // Requests and operations
  OPERATION_NOT_CANCELLABLE: {
    meaning: 'the operation has switched or ended and can no longer be cancelled',
    httpStatus: 409,
    exit: 'refused',
  },
  OPERATION_CANCELLED: {
    meaning: 'the operation was cancelled on request before it changed anything',
    httpStatus: 409,
    exit: 'cancelled',
  },
  OPERATION_TIMED_OUT: {
    meaning: 'the command stopped waiting for an operation that goes on',
    httpStatus: 504,
    exit: 'timedOut',
  },
  REQUEST_TIMEOUT: {
    meaning: 'a request did not arrive in time',
    httpStatus: 408,
    exit: 'noDaemon',
  },
  REQUEST_HEADERS_TOO_LARGE: {
    meaning: "a request's URL or headers are over the size limit",
    httpStatus: 431,
    exit: 'usage',
  },
  // Daemon start-up
  DAEMON_NOT_READY: {
    meaning:
      'the daemon serves reads but takes no changes yet: it is starting, moving its files or waiting to be replaced',
    httpStatus: 503,
    exit: 'busy',
  },
} as const satisfies Record<ErrorCode, ErrorRow>;

/** The exit code a command ends with when it fails with an error of this code. */
export function exitCodeFor(code: ErrorCode): number {
  return exitCodes[errorTable[code].exit].code;
}

/** The HTTP status the API answers an error of this code with. */
export function httpStatusFor(code: ErrorCode): number {
  return errorTable[code].httpStatus;
}
