import { createHash } from 'node:crypto';
import { chmod, link, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { secondBuildArgv, sharedSecondBuild } from '../../support/shared-second-builds.js';
import { formatCommandResult, runProcess } from './run-process.js';

/** A release archive on this machine, as `aks-flex-node agent-upgrade` takes it. */
export interface ReleaseArchive {
  /** What the archive's binary reports as its version. */
  readonly version: string;
  readonly path: string;
  /** The archive's SHA-256 in hex, for `--sha256`. */
  readonly sha256: string;
}

/** The architecture in release names, as the Go releases and `scripts/build.mjs` spell it. */
export const releaseArch = process.arch === 'arm64' ? 'arm64' : 'amd64';

/** The one member a release archive may hold; the daemon refuses any other name. */
export const releaseMember = `aks-flex-node-linux-${releaseArch}`;

/** The release archive's file name; the version is in the download path, not here. */
export const releaseArchiveFile = `${releaseMember}.tar.gz`;

/**
 * Makes a directory for release archives under /var/tmp. Not under the
 * machines directory, whose sweep would take it for an abandoned machine.
 * The caller removes it.
 */
export function createReleaseDir(): Promise<string> {
  return mkdtemp('/var/tmp/aks-flex-node-e2e-releases-');
}

/**
 * Builds the product again from this checkout, reporting `version`, with
 * `scripts/build.mjs --version V --out DIR`: a second build to upgrade to.
 * About 15 s, so a suite builds it once, in `beforeAll`. In a suite run
 * (the global setup sets AKS_FLEX_NODE_SECOND_BUILD_DIR) each version is
 * built once for every file that asks for it, and its archive is linked
 * into `dir`, so the caller finds it there and removes `dir` as before.
 */
export async function buildSecondRelease(version: string, dir: string): Promise<ReleaseArchive> {
  const shared = sharedSecondBuild(version);
  const argv = shared?.argv ?? secondBuildArgv(version, dir);
  const result = await runProcess(argv, { timeoutMs: 300_000 });
  if (result.exitCode !== 0) {
    throw new Error(`build a second release\n${formatCommandResult(argv.join(' '), result)}`);
  }
  if (shared !== undefined) {
    await mkdir(dir, { recursive: true });
    await link(shared.archive, path.join(dir, releaseArchiveFile));
  }
  return readReleaseArchive(dir, version);
}

/** The archive `scripts/build.mjs --version V --out DIR` wrote, with its digest. */
export async function readReleaseArchive(dir: string, version: string): Promise<ReleaseArchive> {
  const archive = path.join(dir, releaseArchiveFile);
  return { version, path: archive, sha256: await sha256Of(archive) };
}

/**
 * tar's command line that packs `member` of `stage` as a release archive:
 * owner 0, no directory entries, at gzip's fastest level. A scenario's
 * archive is read once and every level is read alike; level 6 cost 5 s of
 * CPU per 134 MB binary, level 1 1.9 s.
 */
export function packArgv(stage: string, archive: string, member: string): string[] {
  return [
    'tar',
    '-C',
    stage,
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--use-compress-program=gzip -1',
    '-cf',
    archive,
    member,
  ];
}

/**
 * Packs an executable as a release archive the way `scripts/build.mjs`
 * does: one regular file named {@link releaseMember}, mode 0755, owner 0,
 * no directory entries. The archive is named after `name`, in `dir`.
 * `executable` is a script's text or a built executable's bytes.
 */
export async function packReleaseArchive(
  dir: string,
  name: string,
  version: string,
  executable: string | Uint8Array,
): Promise<ReleaseArchive> {
  const stage = path.join(dir, `${name}.stage`);
  await mkdir(stage, { recursive: true });
  await writeFile(path.join(stage, releaseMember), executable);
  // Explicitly, because the umask decides what writeFile's mode becomes.
  await chmod(path.join(stage, releaseMember), 0o755);
  const archive = path.join(dir, `${name}.tar.gz`);
  const argv = packArgv(stage, archive, releaseMember);
  const result = await runProcess(argv);
  if (result.exitCode !== 0) {
    throw new Error(`pack ${archive}\n${formatCommandResult(argv.join(' '), result)}`);
  }
  return { version, path: archive, sha256: await sha256Of(archive) };
}

async function sha256Of(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}
