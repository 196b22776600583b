import { getRawAsset, isSea } from 'node:sea';
import { AgentError } from '@aks-flex-node/log';
import { evaluateCommonJs } from './evaluate-common-js.js';
import type { BundleName } from './role-homes.js';
import { assetBytes, assetText } from './sea-asset.js';
import type { BundleEntry } from './run-role.js';

/**
 * Each bundle's source, for runs from source (unit tests). scripts/build.mjs
 * keeps these imports out of every bundle it builds: in the executable each
 * bundle is an asset, evaluated by {@link runBundle} instead.
 */
const bundleSources: Record<BundleName, () => Promise<BundleEntry>> = {
  cold: () => import('../bundles/cold.js'),
  'fetch-bootstrap-data': () => import('../bundles/fetch-bootstrap-data.js'),
  'host-root': () => import('../bundles/host-root.js'),
  'host-root-migrate': () => import('../bundles/host-root-migrate.js'),
  'nspawn-lifecycle': () => import('../bundles/nspawn-lifecycle.js'),
  status: () => import('../bundles/status.js'),
  token: () => import('../bundles/token.js'),
  'token-issue': () => import('../bundles/token-issue.js'),
};

/**
 * The names of a bundle's assets in the executable: its script, and the V8
 * code cache scripts/build.mjs makes by evaluating it once at build time.
 */
export function bundleAssetNames(name: BundleName): { script: string; codeCache: string } {
  return { script: `${name}.cjs`, codeCache: `${name}.code-cache` };
}

/**
 * Runs `role` from bundle `name` and resolves with its exit code; the
 * bundle reports the role's errors. Throws INTERNAL when the executable
 * lacks the bundle, which only a broken build causes.
 */
export async function runBundle(name: BundleName, role: string, args: string[]): Promise<number> {
  const entry = isSea() ? evaluateAsset(name) : await bundleSources[name]();
  return entry.runBundleRole(role, args, runBundle);
}

function evaluateAsset(name: BundleName): BundleEntry {
  const assets = bundleAssetNames(name);
  let source: string;
  try {
    source = assetText(getRawAsset(assets.script));
  } catch (error) {
    throw new AgentError('INTERNAL', `this executable holds no ${assets.script} asset`, {
      path: process.execPath,
      cause: error,
      hint: 'rebuild it with `node scripts/build.mjs`, which embeds every bundle',
    });
  }
  return evaluateCommonJs(source, {
    filename: `${process.execPath}/${assets.script}`,
    codeCache: readCodeCache(assets.codeCache),
    // The executable's own require (its main script is CommonJS): Node's
    // built-in modules only, as for the main script.
    require,
  }) as BundleEntry;
}

// A missing cache only costs time: V8 compiles the script instead. A view,
// not a copy (sea-asset.ts): V8 reads it once while compiling.
function readCodeCache(asset: string): Buffer | undefined {
  try {
    return assetBytes(getRawAsset(asset));
  } catch {
    return undefined;
  }
}
