// The release archive as the Go releases name it: their install.sh downloads
// releases/download/<version>/aks-flex-node-linux-<arch>.tar.gz and requires
// the member aks-flex-node-linux-<arch>, and their AgentUpgrade extracts
// exactly that member. The version is in the download path, never here.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Node's and uname's names for an architecture, mapped to the Go releases' spelling. */
const releaseArches = {
  x64: 'amd64',
  x86_64: 'amd64',
  amd64: 'amd64',
  arm64: 'arm64',
  aarch64: 'arm64',
};

/** `amd64` or `arm64` for a Node (`x64`), uname (`x86_64`) or Go name; throws for any other. */
export function releaseArch(arch = process.arch) {
  const spelled = releaseArches[arch];
  if (spelled === undefined) throw new Error(`no release is built for the architecture ${arch}`);
  return spelled;
}

/** The archive's one member. */
export function releaseMember(arch = process.arch) {
  return `aks-flex-node-linux-${releaseArch(arch)}`;
}

/** The archive's file name. */
export function releaseArchiveName(arch = process.arch) {
  return `${releaseMember(arch)}.tar.gz`;
}

/**
 * Packs `binary` as the release archive for `arch` in `outDir`, with its
 * `.sha256` beside it, staging in `workDir`. Returns the archive's path.
 */
export function writeReleaseArchive({ binary, arch = process.arch, outDir, workDir }) {
  const member = releaseMember(arch);
  const archive = path.join(outDir, releaseArchiveName(arch));
  const stage = path.join(workDir, 'archive');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  copyFileSync(binary, path.join(stage, member));
  chmodSync(path.join(stage, member), 0o755);
  // Fixed owner and no directory entry: the archive holds exactly one regular file.
  execFileSync('tar', [
    '-C',
    stage,
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '-czf',
    archive,
    member,
  ]);
  rmSync(stage, { recursive: true, force: true });
  const digest = createHash('sha256').update(readFileSync(archive)).digest('hex');
  // sha256sum's format, so `sha256sum -c` and the Go install.sh can check it.
  writeFileSync(`${archive}.sha256`, `${digest}  ${path.basename(archive)}\n`);
  return archive;
}
