import type { ErrorCode } from '@aks-flex-node/log';

/** The HTTP status the API answers an error of this code with. */
export function httpStatusFor(code: ErrorCode): number {
  switch (code) {
    case 'INVALID_ARGUMENT':
    case 'INVALID_CONFIG':
      return 400;
    case 'NOT_FOUND':
      return 404;
    case 'NOT_ROOT':
      return 403;
    case 'REQUEST_TIMEOUT':
      return 408;
    case 'REQUEST_HEADERS_TOO_LARGE':
      return 431;
    case 'OPERATION_NOT_CANCELLABLE':
      return 409;
    case 'REQUEST_TOO_LARGE':
      return 413;
    case 'ACTIVATION_IN_PROGRESS':
    case 'DAEMON_RUNNING':
    case 'HOST_ROOT_REFUSED':
      return 409;
    case 'UPGRADE_REFUSED':
      return 422;
    case 'DAEMON_UNREACHABLE':
    case 'SYSTEMD_FAILED':
    case 'HOST_NETWORK_FAILED':
    case 'CREDENTIAL_FAILED':
    case 'DAEMON_NOT_READY':
      return 503;
    case 'HOST_ROOT_IO':
    case 'NOT_EXECUTABLE':
    case 'UPGRADE_FAILED':
    case 'DAEMON_ERROR':
    case 'INTERNAL':
      return 500;
    default: {
      const unhandled: never = code;
      throw new Error(`no HTTP status for error code ${String(unhandled)}`);
    }
  }
}
