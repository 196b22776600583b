import { stat } from 'node:fs/promises';
import { capabilities, versionInfoSchema } from '@aks-flex-node/api';
import { checkBinaryRuns } from '@aks-flex-node/fs';
import { isNotFound } from '@aks-flex-node/log';

/**
 * Whose binary a link names: this product's (it runs under this product's
 * confined units), or another release's (a Go release, before or after this
 * product on the host), which must run under the units it wrote itself.
 */
export type ReleaseKind = 'this-product' | 'other-release';

/** What the agent unit runs (`current`) and what the recovery unit runs (`last-good`). */
export interface ReleaseKinds {
  current: ReleaseKind;
  lastGood: ReleaseKind;
}

/** Both links name this product: the units as this product ships them. */
export const thisProductOnly: ReleaseKinds = { current: 'this-product', lastGood: 'this-product' };

/** The capability only this product's `version --json` announces; no Go release answers --json. */
const productCapability: (typeof capabilities)[number] = 'api-v1';

const versionTimeoutMs = 10_000;

/** Answers by file identity, so a daemon start asks each binary once per boot, not per call. */
const known = new Map<string, ReleaseKind>();

/**
 * Whether `binary` is this product: the running executable itself, or a
 * binary whose `version --json` announces this product's API. Anything else
 * that runs is another release (a Go release has no `--json` and exits
 * non-zero, or prints text). A missing binary counts as this product: no
 * other release can start from it, and the units stay as they are.
 */
export async function releaseKindOf(binary: string, ownExecutable?: string): Promise<ReleaseKind> {
  let key: string;
  try {
    const info = await stat(binary);
    key = `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}`;
    if (ownExecutable !== undefined) {
      const own = await stat(ownExecutable);
      if (own.dev === info.dev && own.ino === info.ino) return 'this-product';
    }
  } catch (error) {
    if (isNotFound(error)) return 'this-product';
    throw error;
  }
  const cached = known.get(key);
  if (cached !== undefined) return cached;
  const kind = await askVersion(binary);
  known.set(key, kind);
  return kind;
}

async function askVersion(binary: string): Promise<ReleaseKind> {
  let output: string;
  try {
    output = await checkBinaryRuns(binary, {
      args: ['version', '--json'],
      timeoutMs: versionTimeoutMs,
    });
  } catch {
    // A Go release rejects the flag; one that does not run at all starts
    // nothing either way, and the recovery shim judges it on its own.
    return 'other-release';
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(output.trim().split('\n').at(-1) ?? '');
  } catch {
    return 'other-release';
  }
  const info = versionInfoSchema.safeParse(parsed);
  return info.success && info.data.capabilities.includes(productCapability)
    ? 'this-product'
    : 'other-release';
}
