import { existsSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './e2e-paths.js';
import type { Host } from './host.js';
import { productPaths } from './product-names.js';
import type { CommandResult } from './run-process.js';
import { formatCommandResult } from './run-process.js';
import { runOrThrow } from './run-or-throw.js';
import { copyIn } from './write-host-file.js';

/**
 * The built executable: `dist/aks-flex-node` from `pnpm build`, or the file
 * AKS_FLEX_NODE_E2E_BINARY names (a release artifact being checked, or a
 * stand-in while the real one does not exist yet).
 */
export const productBinary =
  process.env.AKS_FLEX_NODE_E2E_BINARY ?? path.join(repoRoot, 'dist/aks-flex-node');

/** True when the product has been built, so product scenarios can run. */
export function isProductBuilt(): boolean {
  return existsSync(productBinary);
}

/** What product scenarios print when they cannot run. */
export const productSkipMessage =
  process.env.AKS_FLEX_NODE_E2E_BINARY === undefined
    ? 'SKIPPED: dist/aks-flex-node not built; run pnpm build'
    : `SKIPPED: ${productBinary} (AKS_FLEX_NODE_E2E_BINARY) does not exist`;

/** Where an operator's download lands before `start` installs it. */
export const downloadedBinary = '/var/tmp/aks-flex-node';

/**
 * Installs the product as an operator would: copy the executable onto the
 * host and run `aks-flex-node start`, which installs itself and its units
 * and starts them. Throws with the command's output when start fails.
 */
export async function installProduct(host: Host): Promise<CommandResult> {
  await copyIn(host, productBinary, downloadedBinary, 0o755);
  return runOrThrow(host, [downloadedBinary, 'start'], { timeoutMs: 180_000 });
}

/** Runs the installed `aks-flex-node` with arguments; resolves for every exit code. */
export function runProduct(host: Host, args: readonly string[]): Promise<CommandResult> {
  return host.run([productPaths.installedBinary, ...args]);
}

/** `aks-flex-node status --json`, parsed. Throws with the output when it fails or is not JSON. */
export async function readProductStatus(host: Host): Promise<unknown> {
  const result = await runOrThrow(host, [productPaths.installedBinary, 'status', '--json']);
  return parseJsonOutput(result, 'status --json');
}

/** Parses a `--json` command's stdout, naming the command when it is not JSON. */
export function parseJsonOutput(result: CommandResult, command: string): unknown {
  try {
    return JSON.parse(result.stdout);
  } catch (err) {
    throw new Error(
      `parse the output of aks-flex-node ${command} as JSON\n${formatCommandResult(command, result)}`,
      {
        cause: err,
      },
    );
  }
}
