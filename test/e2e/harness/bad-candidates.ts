import type { ReleaseArchive } from './release-archive.js';
import { packReleaseArchive, releaseArch } from './release-archive.js';

/** The version every bad candidate reports. */
export const badCandidateVersion = '9.9.9-bad';

/**
 * How each bad candidate's daemon fails. Both pass the check before the
 * switch, so the upgrade does switch to them: `version --json` answers
 * with the `host-root` capability, as a release for this host does.
 */
export const badCandidateFailures = {
  /** The daemon exits 1 as soon as systemd starts it. */
  'exits-at-once': 'exit 1',
  /** The daemon runs for 4 s without serving, then dies by SIGKILL, as an OOM kill ends it. */
  'crashes-after-4s': 'sleep 4\n    kill -KILL $$',
  /**
   * The daemon runs and never answers on the socket, so it never judges
   * itself: the guard's deadline to answer (5 s) ends it.
   */
  hangs: 'exec sleep infinity',
  /**
   * The daemon stops (SIGSTOP) before it takes the socket, as a process
   * stuck at its start: the unit stays active and nothing answers. The
   * rollback's stop sends SIGCONT after SIGTERM, which ends it.
   */
  'stopped-before-socket': 'kill -STOP $$',
} as const;

/** A name of {@link badCandidateFailures}. */
export type BadCandidate = keyof typeof badCandidateFailures;

/**
 * A bash script standing in for the product: it answers `version` and
 * `version --json` as a release does, and fails as `agent`.
 */
export function badCandidateScript(candidate: BadCandidate): string {
  const versionJson = JSON.stringify({
    version: badCandidateVersion,
    commit: 'x',
    arch: releaseArch,
    node: 'none',
    capabilities: ['host-root', 'api-v1'],
  });
  return `#!/bin/bash
# A bad AgentUpgrade candidate (${candidate}), from test/e2e/harness/bad-candidates.ts.
case "\${1:-}" in
  version)
    if [[ \${2:-} == --json ]]; then
      echo '${versionJson}'
    else
      echo 'aks-flex-node ${badCandidateVersion}'
    fi
    ;;
  agent)
    ${badCandidateFailures[candidate]}
    ;;
  *)
    echo "bad candidate: $*" >&2
    exit 1
    ;;
esac
`;
}

/** Packs a bad candidate as a release archive in `dir`. */
export function packBadCandidate(dir: string, candidate: BadCandidate): Promise<ReleaseArchive> {
  return packReleaseArchive(dir, candidate, badCandidateVersion, badCandidateScript(candidate));
}
