import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { releaseArchiveName } from '../../scripts/release-archive.mjs';
import { secondBuildArgv, sharedSecondBuild } from '../support/shared-second-builds.js';

/**
 * Builds the product again with another version into a directory under
 * /var/tmp (private hosts replace /tmp), so a suite can upgrade to it. In a
 * suite run, whose global setup sets AKS_FLEX_NODE_SECOND_BUILD_DIR, each
 * version is built once and shared by the files that ask for it
 * (test/support/shared-second-builds.ts): four files upgrade to 0.2.0-test.
 * The caller removes `dir` unless that variable is set.
 * Returns the release archive's path and its SHA-256.
 */
export function secondBuild(version = '0.2.0-test'): {
  archive: string;
  sha256: string;
  dir: string;
} {
  const shared = sharedSecondBuild(version);
  const dir = shared?.dir ?? mkdtempSync(path.join('/var/tmp', 'aks-flex-node-second-build-'));
  const [command = '', ...args] = shared?.argv ?? secondBuildArgv(version, dir);
  execFileSync(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const archive = path.join(dir, releaseArchiveName());
  const sha256 = execFileSync('sha256sum', [archive], { encoding: 'utf8' }).split(' ')[0] ?? '';
  return { archive, sha256, dir };
}
