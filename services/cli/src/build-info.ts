import { capabilities, type VersionInfo } from '@aks-flex-node/api';
import { releaseArch } from '@aks-flex-node/archive';

// Replaced by scripts/build.mjs at build time (esbuild `define`). Unbuilt runs
// (unit tests) see the fallbacks below.
declare const __AKS_FLEX_NODE_VERSION__: string | undefined;
declare const __AKS_FLEX_NODE_COMMIT__: string | undefined;

/** The version this build was given, or `0.0.0-dev` when running from source. */
export const buildVersion: string =
  typeof __AKS_FLEX_NODE_VERSION__ === 'string' ? __AKS_FLEX_NODE_VERSION__ : '0.0.0-dev';

/** The commit this build was made from, or `unknown` when running from source. */
export const buildCommit: string =
  typeof __AKS_FLEX_NODE_COMMIT__ === 'string' ? __AKS_FLEX_NODE_COMMIT__ : 'unknown';

/** What `version --json` prints and the daemon reports in its status. */
export function versionInfo(): VersionInfo {
  return {
    version: buildVersion,
    commit: buildCommit,
    // Spelled as the Go releases spell it (amd64, arm64), like the release archive's name.
    arch: releaseArch(),
    node: process.versions.node,
    capabilities: [...capabilities],
  };
}
