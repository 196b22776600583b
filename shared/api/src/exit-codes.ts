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
  notRoot: { code: 8, meaning: 'the command must run as root' },
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
    case 'DAEMON_NOT_READY':
      return 'busy';
    case 'DAEMON_UNREACHABLE':
      return 'unreachable';
    case 'UPGRADE_FAILED':
      return 'upgradeFailed';
    case 'NOT_EXECUTABLE':
      return 'notExecutable';
    case 'NOT_ROOT':
      return 'notRoot';
    case 'HOST_ROOT_IO':
    case 'DAEMON_ERROR':
    case 'NOT_FOUND':
    case 'SYSTEMD_FAILED':
    case 'HOST_NETWORK_FAILED':
    case 'CREDENTIAL_FAILED':
    case 'INTERNAL':
      return 'failure';
    default: {
      const unhandled: never = code;
      throw new Error(`no exit code for error code ${String(unhandled)}`);
    }
  }
}

/**
 * Exit codes of scripts/install.sh, bootstrap.sh and uninstall.sh, copied there
 * as `EXIT_*` constants (a test compares them). They lie outside the CLI's
 * range on purpose: bootstrap.sh ends with the agent's own status when
 * preflight or start fails, and a first-boot unit must tell the two apart.
 * `permanent` codes mean a retry cannot succeed until someone changes the
 * input or the host (the first-boot unit stops retrying on them); the others
 * may pass (upstream #383).
 */
export const scriptExitCodes = {
  ok: {
    code: 0,
    permanent: false,
    meaning: 'success, --help, or an uninstall cancelled at the prompt',
  },
  failure: {
    code: 1,
    permanent: false,
    meaning: 'a step failed for a reason that may pass; the ERROR line says which',
  },
  usage: {
    code: 64,
    permanent: true,
    meaning:
      'a setting was not understood, conflicts with another, or needs the Azure control plane',
  },
  badInput: {
    code: 65,
    permanent: true,
    meaning: 'the base config, an override, a credential file or the agent archive is wrong',
  },
  unsupportedHost: {
    code: 69,
    permanent: true,
    meaning:
      'the host cannot run the agent: unsupported OS or architecture, or a required command is missing',
  },
  temporary: {
    code: 75,
    permanent: false,
    meaning: 'a download failed, or an agent activation holds the lock; retry later',
  },
  notRoot: { code: 77, permanent: true, meaning: 'the script was not run as root' },
  refused: {
    code: 78,
    permanent: true,
    meaning:
      'the host refuses the install: a link at the binary path, or the agent service is installed',
  },
} as const;

/** A name from {@link scriptExitCodes}. */
export type ScriptExitCodeName = keyof typeof scriptExitCodes;
