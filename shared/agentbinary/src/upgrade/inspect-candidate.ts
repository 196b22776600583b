import { versionInfoSchema, type VersionInfo } from '@aks-flex-node/api';
import { checkBinaryRuns } from '@aks-flex-node/fs';
import { hostRootState, type HostRootPaths } from '@aks-flex-node/hostroot';
import { AgentError } from '@aks-flex-node/log';

const versionTimeoutMs = 30_000;

/**
 * Runs the installed candidate and refuses one that cannot serve this host.
 * A release that predates the host root cannot find its files on a host
 * whose root is a real directory: it would only fail and roll back later, so
 * it is refused before the switch. On a linked host such a release still
 * finds its files under the legacy root and is accepted.
 */
export async function inspectCandidate(slot: string, paths: HostRootPaths): Promise<VersionInfo> {
  const info = await readVersionInfo(slot);
  const state = await hostRootState(paths);
  const needsHostRoot = state === 'installed' || state === 'moving';
  if (needsHostRoot && !(await knowsHostRoot(slot, info, paths.root))) {
    const what =
      info.version === olderRelease
        ? 'has no `host-root` command that prints one path'
        : `${info.version} has no \`host-root\` command that prints one path, nor the host-root capability`;
    throw new AgentError(
      'UPGRADE_REFUSED',
      `the candidate ${what}, so it predates the host root and cannot find its files under ${paths.root}`,
      {
        path: slot,
        hint: 'upgrade to a release that supports the host root; to go back to an older release, reset and reinstall it',
      },
    );
  }
  return info;
}

const olderRelease = 'unknown (a release without version --json)';

/**
 * Whether a candidate knows the host root, decided as the Go releases decide
 * it (spec daemon 7.1): its `host-root` command exists and prints one bare
 * absolute path on one line. Go releases that know the host root have that
 * command but no `version --json`, so the capability this product announces
 * is only a shortcut, never required.
 */
async function knowsHostRoot(slot: string, info: VersionInfo, root: string): Promise<boolean> {
  if (info.capabilities.includes('host-root')) return true;
  let output: string;
  try {
    output = await checkBinaryRuns(slot, { args: ['host-root'], timeoutMs: versionTimeoutMs });
  } catch {
    // A release without the command fails it: it predates the host root.
    return false;
  }
  if (!isOneBarePath(output)) return false;
  // As the Go guard compares it: a release that would look elsewhere cannot serve this host.
  const used = output.trim();
  if (used !== root) {
    throw new AgentError(
      'UPGRADE_REFUSED',
      `the candidate uses the host root ${used}, but this host uses ${root}`,
      { path: slot, hint: 'upgrade to a release built for this host root' },
    );
  }
  return true;
}

/** One absolute path and its newline, nothing else: what the Go guard compares. */
export function isOneBarePath(output: string): boolean {
  const lines = output.split('\n');
  const [first] = lines;
  return (
    lines.length === 2 &&
    lines[1] === '' &&
    first !== undefined &&
    first.startsWith('/') &&
    first.trim() === first &&
    !first.includes('\0')
  );
}

async function readVersionInfo(slot: string): Promise<VersionInfo> {
  try {
    const output = await checkBinaryRuns(slot, {
      args: ['version', '--json'],
      timeoutMs: versionTimeoutMs,
    });
    const parsed = versionInfoSchema.safeParse(parseLastLine(output));
    if (parsed.success) return parsed.data;
  } catch {
    // An older release rejects the flag; whether it runs at all is checked below.
  }
  await checkBinaryRuns(slot, { args: ['version'], timeoutMs: versionTimeoutMs }).catch(
    (error: unknown) => {
      throw new AgentError(
        'UPGRADE_REFUSED',
        `the candidate ${slot} does not run: \`version\` failed`,
        {
          path: slot,
          cause: error,
          hint: 'check that the archive is an aks-flex-node release for this architecture',
        },
      );
    },
  );
  return { version: olderRelease, commit: '', arch: process.arch, node: '', capabilities: [] };
}

function parseLastLine(output: string): unknown {
  try {
    return JSON.parse(output.trim().split('\n').at(-1) ?? '');
  } catch {
    return undefined;
  }
}
