import { AgentError } from '@aks-flex-node/log';

/**
 * An architecture as the Go releases spell it in release names and in
 * `version --json`: `amd64` for x86_64 (Node's `x64`), `arm64` for aarch64.
 * scripts/release-archive.mjs keeps the same table for the build.
 * Throws INVALID_ARGUMENT for an architecture no release is built for.
 */
export function releaseArch(arch: string = process.arch): 'amd64' | 'arm64' {
  switch (arch) {
    case 'x64':
      return 'amd64';
    case 'arm64':
      return 'arm64';
    default:
      throw new AgentError(
        'INVALID_ARGUMENT',
        `no aks-flex-node release is built for the architecture ${arch}`,
        {
          path: arch,
          hint: 'run aks-flex-node on an x86_64 or aarch64 Linux host',
        },
      );
  }
}

/**
 * The one member a release archive holds for `arch`:
 * `aks-flex-node-linux-amd64` or `aks-flex-node-linux-arm64`. The Go
 * releases' install.sh and AgentUpgrade require exactly this name, and this
 * product extracts only it.
 */
export function releaseArchiveMember(arch: string = process.arch): string {
  return `aks-flex-node-linux-${releaseArch(arch)}`;
}

/**
 * The release archive's file name for `arch`, without the version: releases
 * differ by download path (`releases/download/<version>/<name>`).
 */
export function releaseArchiveName(arch: string = process.arch): string {
  return `${releaseArchiveMember(arch)}.tar.gz`;
}
