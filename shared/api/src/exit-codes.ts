/**
 * The one table of process exit codes. The CLI, the hooks and the recovery
 * shim exit only with these; each error code names its exit code in
 * `errorTable` (error-table.ts), and the shell scripts keep copies of their
 * own codes that a test compares with {@link scriptExitCodes}.
 *
 * Codes 0 to 8 keep the meanings earlier releases of this product gave them:
 * the first-boot unit (scripts/aks-flex-node-bootstrap.bu) stops retrying on
 * 2 and 3 and retries every other code of `preflight` and `start`, so a new
 * kind of outcome gets a new number rather than a borrowed one.
 */
export const exitCodes = {
  ok: { code: 0, meaning: 'success' },
  failure: { code: 1, meaning: 'the command failed for another reason; the error line says why' },
  usage: { code: 2, meaning: 'the command line or the config was not understood' },
  refused: {
    code: 3,
    meaning:
      'refused before anything changed, because of the candidate, the config or the host state',
  },
  busy: {
    code: 4,
    meaning: 'another activation, reset or daemon holds the lock or is starting; try again later',
  },
  noDaemon: { code: 5, meaning: 'no daemon answered on its socket' },
  rolledBack: {
    code: 6,
    meaning: 'the upgrade failed after the switch and was rolled back to the last-good binary',
  },
  notExecutable: { code: 7, meaning: 'a binary does not run where it is installed' },
  notRoot: { code: 8, meaning: 'the command must run as root' },
  fetchFailed: {
    code: 9,
    meaning:
      'downloading the release, or a call to an Azure service, failed for a reason that may pass and nothing changed; a retry may succeed',
  },
  cancelled: { code: 10, meaning: 'the operation was cancelled before it changed anything' },
  timedOut: {
    code: 11,
    meaning: 'the command stopped waiting while the operation goes on; `operations ID` shows it',
  },
  denied: {
    code: 12,
    meaning:
      'an Azure service refused the identity or the target (401, 403, 404); a retry fails the same way until they are fixed',
  },
} as const;

/** A name from {@link exitCodes}. */
export type ExitCodeName = keyof typeof exitCodes;

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
    meaning: 'a setting was not understood or conflicts with another',
  },
  badInput: {
    code: 65,
    permanent: true,
    meaning:
      'the base config, an override, a credential file or the agent archive is wrong, or Azure refused the identity or the target (401, 403, 4xx) when fetching bootstrap data',
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
    meaning:
      'a download or the bootstrap-data fetch failed for a reason that may pass (network, 5xx, 429), or an agent activation holds the lock; retry later',
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
