import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostPathsUnder, type HostPaths } from '@aks-flex-node/layout';
import { isAgentError } from '@aks-flex-node/log';
import { inspectCandidate, isOneBarePath } from './inspect-candidate.js';

// Whether a candidate knows the host root is decided as the Go releases decide
// it (spec daemon 7.1): its `host-root` command prints one bare path, the one
// this host uses. Go releases have no `version --json`.
let tmp: string;
let paths: HostPaths;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'inspect-candidate-'));
  paths = hostPathsUnder(tmp);
  await mkdir(paths.root, { recursive: true }); // an installed host: the root is a directory
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A Go-style release: `version` prints text, `version --json` is an unknown flag, `host-root` prints `hostRoot`. */
async function goRelease(hostRoot: string | undefined): Promise<string> {
  const file = path.join(tmp, 'candidate');
  const hostRootCase = hostRoot === undefined ? '' : `host-root) printf '%s\\n' '${hostRoot}' ;;`;
  await writeFile(
    file,
    `#!/bin/sh
case "$1 $2" in
  "version ") echo "aks-flex-node version v0.9.0" ;;
  "version --json") echo "Error: unknown flag: --json" >&2; exit 1 ;;
  *) case "$1" in ${hostRootCase} *) echo "Error: unknown command" >&2; exit 1 ;; esac ;;
esac
`,
    { mode: 0o755 },
  );
  return file;
}

describe('inspectCandidate on an installed host', () => {
  it('accepts a Go release whose host-root prints this host root', async () => {
    const info = await inspectCandidate(await goRelease(paths.root), paths);
    expect(info.capabilities).toEqual([]);
  });

  it('refuses a release without a host-root command: it predates the host root', async () => {
    await expect(inspectCandidate(await goRelease(undefined), paths)).rejects.toSatisfy(
      (error) => isAgentError(error, 'UPGRADE_REFUSED') && error.message.includes('host-root'),
    );
  });

  it('refuses a release that uses another host root, naming both', async () => {
    await expect(inspectCandidate(await goRelease('/usr/local'), paths)).rejects.toSatisfy(
      (error) =>
        isAgentError(error, 'UPGRADE_REFUSED') &&
        error.message.includes('/usr/local') &&
        error.message.includes(paths.root),
    );
  });
});

describe('isOneBarePath', () => {
  it.each([
    ['/opt/unbounded/agent\n', true],
    ['/usr/local\n', true],
    ['/opt/unbounded/agent', false],
    ['/opt/unbounded/agent\n\n', false],
    ['host root: /opt/unbounded/agent\n', false],
    [' /opt/unbounded/agent\n', false],
    ['{"path":"/opt/unbounded/agent"}\n', false],
    ['relative/path\n', false],
  ])('%j is %s', (output, expected) => {
    expect(isOneBarePath(output)).toBe(expected);
  });
});
