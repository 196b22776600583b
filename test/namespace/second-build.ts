import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { releaseArchiveName } from '../../scripts/release-archive.mjs';

const workspace = path.resolve(import.meta.dirname, '../..');

/**
 * Builds the product again with another version into a directory under
 * /var/tmp (private hosts replace /tmp), or reuses AKS_FLEX_NODE_SECOND_BUILD_DIR,
 * so a suite can upgrade to it. The caller removes `dir`.
 * Returns the release archive's path and its SHA-256.
 */
export function secondBuild(version = '0.2.0-test'): {
  archive: string;
  sha256: string;
  dir: string;
} {
  const dir =
    process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR ??
    mkdtempSync(path.join('/var/tmp', 'aks-flex-node-second-build-'));
  const archive = path.join(dir, releaseArchiveName());
  if (!existsSync(archive)) {
    execFileSync(
      process.execPath,
      [path.join(workspace, 'scripts/build.mjs'), '--version', version, '--out', dir],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
  }
  const sha256 = execFileSync('sha256sum', [archive], { encoding: 'utf8' }).split(' ')[0] ?? '';
  return { archive, sha256, dir };
}
