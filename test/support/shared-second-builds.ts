/**
 * Second builds (the product built again with another version, to upgrade
 * to) shared by the files of one suite run: each version is built once, in
 * a directory of its own under AKS_FLEX_NODE_SECOND_BUILD_DIR, which the
 * suite's global setup makes and removes. A build is about 12 s of CPU, and
 * several files of each suite upgrade to the same version.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { releaseArchiveName } from '../../scripts/release-archive.mjs';

const workspace = path.resolve(import.meta.dirname, '../..');

/** The command that builds the product again, reporting `version`, into `dir`. */
export function secondBuildArgv(version: string, dir: string): string[] {
  return [
    process.execPath,
    path.join(workspace, 'scripts/build.mjs'),
    '--version',
    version,
    '--out',
    dir,
  ];
}

/**
 * In a suite run (AKS_FLEX_NODE_SECOND_BUILD_DIR set), the command that
 * makes `version`'s shared build unless it is there, and where it is;
 * undefined outside one. flock(1) lets the first file to ask build it while
 * the others wait, then find it. The archive's `.sha256`, which build.mjs
 * writes last, is what says a build finished. One directory for every
 * version would hand a file that asked for one version the archive of
 * another.
 */
export function sharedSecondBuild(
  version: string,
): { argv: string[]; dir: string; archive: string } | undefined {
  const reuse = process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR;
  if (reuse === undefined) return undefined;
  const dir = path.join(reuse, version);
  const archive = path.join(dir, releaseArchiveName());
  const argv = [
    'flock',
    path.join(reuse, `${version}.lock`),
    'sh',
    '-c',
    'mkdir -p "$1" && { test -e "$2.sha256" || { shift 2 && exec "$@"; }; }',
    'sh',
    dir,
    archive,
    ...secondBuildArgv(version, dir),
  ];
  return { argv, dir, archive };
}

let made: string | undefined;

/**
 * A global setup's half: makes the run's directory and names it in the
 * environment the workers inherit. One the developer named already is
 * theirs: used, never removed.
 */
export function setUpSharedSecondBuilds(): void {
  if (process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR !== undefined) return;
  // /var/tmp: the private hosts replace /tmp, and a build is 180 MB.
  made = mkdtempSync(path.join('/var/tmp', 'aks-flex-node-second-builds-'));
  process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR = made;
}

/** The teardown's half, after every file: the workers are gone, and the builds with them. */
export function tearDownSharedSecondBuilds(): void {
  if (made === undefined) return;
  rmSync(made, { recursive: true, force: true });
  delete process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR;
  made = undefined;
}
