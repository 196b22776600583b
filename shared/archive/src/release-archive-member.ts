import { AgentError } from '@aks-flex-node/log';

/**
 * The member name a release archive holds for `arch`, as scripts/build.mjs
 * names it: `aks-flex-node-linux-x64` or `aks-flex-node-linux-arm64`. Node's
 * arch names, not Go's (amd64): our build is the one that makes the archives.
 * Throws INVALID_ARGUMENT for an architecture no release is built for.
 */
export function releaseArchiveMember(arch: string = process.arch): string {
  switch (arch) {
    case 'x64':
    case 'arm64':
      return `aks-flex-node-linux-${arch}`;
    default:
      throw new AgentError(
        'INVALID_ARGUMENT',
        `no aks-flex-node release is built for the architecture ${arch}`,
        {
          path: arch,
          hint: 'run aks-flex-node on an x64 or arm64 Linux host',
        },
      );
  }
}
