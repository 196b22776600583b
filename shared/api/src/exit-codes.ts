import type { ErrorCode } from '@aks-flex-node/log';

/**
 * The one table of process exit codes. The CLI, the hooks and the recovery
 * shim exit only with these; the shell scripts keep copies that a test
 * compares with this table.
 */
export const exitCodes = {
  ok: { code: 0, meaning: 'success' },
  failure: { code: 1, meaning: 'the command failed; the error line says why' },
  usage: { code: 2, meaning: 'the command line was not understood' },
  refused: { code: 3, meaning: 'the host is in a state the command refuses to change' },
  busy: { code: 4, meaning: 'another activation or daemon holds the lock; try again later' },
  unreachable: { code: 5, meaning: 'the daemon did not answer on its socket' },
  upgradeFailed: { code: 6, meaning: 'the upgrade failed or was rolled back' },
  notExecutable: { code: 7, meaning: 'a binary does not run where it is installed' },
} as const;

/** A name from {@link exitCodes}. */
export type ExitCodeName = keyof typeof exitCodes;

/** The exit code a command ends with when it fails with an error of this code. */
export function exitCodeFor(code: ErrorCode): number {
  return exitCodes[exitCodeNameFor(code)].code;
}

function exitCodeNameFor(code: ErrorCode): ExitCodeName {
  switch (code) {
    case 'INVALID_ARGUMENT':
    case 'INVALID_CONFIG':
    case 'REQUEST_TOO_LARGE':
    case 'REQUEST_HEADERS_TOO_LARGE':
      return 'usage';
    case 'OPERATION_NOT_CANCELLABLE':
      return 'refused';
    case 'REQUEST_TIMEOUT':
      return 'unreachable';
    case 'HOST_ROOT_REFUSED':
    case 'UPGRADE_REFUSED':
      return 'refused';
    case 'ACTIVATION_IN_PROGRESS':
    case 'DAEMON_RUNNING':
      return 'busy';
    case 'DAEMON_UNREACHABLE':
      return 'unreachable';
    case 'UPGRADE_FAILED':
      return 'upgradeFailed';
    case 'NOT_EXECUTABLE':
      return 'notExecutable';
    case 'HOST_ROOT_IO':
    case 'DAEMON_ERROR':
    case 'NOT_FOUND':
    case 'SYSTEMD_FAILED':
    case 'INTERNAL':
      return 'failure';
    default: {
      const unhandled: never = code;
      throw new Error(`no exit code for error code ${String(unhandled)}`);
    }
  }
}
