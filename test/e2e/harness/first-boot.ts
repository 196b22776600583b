import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { IgnitionConfig } from '../../../scripts/ignition/render-butane.js';
import { renderButane } from '../../../scripts/ignition/render-butane.js';
import { repoRoot } from './e2e-paths.js';

/** The Butane template operators render, and the release's bootstrap.sh it embeds. */
export const firstBootTemplate = path.join(repoRoot, 'scripts/aks-flex-node-bootstrap.bu');
export const bootstrapScript = path.join(repoRoot, 'scripts/bootstrap.sh');

/** True once scripts/bootstrap.sh exists, so scenarios that run it can. */
export function hasBootstrapScript(): boolean {
  return existsSync(bootstrapScript);
}

/** The three files an operator renders the template from. */
export interface FirstBootFiles {
  /** The script the unit runs: the release's bootstrap.sh, or a probe in its place. */
  readonly script: string;
  /** bootstrap.sh's settings, as a systemd environment file. */
  readonly env: string;
  readonly baseConfig: string;
}

/**
 * Renders the template from the three files as `butane --strict --files-dir`
 * would (scripts/ignition/render-butane.ts), in a directory removed afterwards.
 */
export async function renderFirstBoot(files: FirstBootFiles): Promise<IgnitionConfig> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'aks-flex-node-first-boot-'));
  try {
    await writeFile(path.join(dir, 'bootstrap.sh'), files.script);
    await writeFile(path.join(dir, 'bootstrap.env'), files.env);
    await writeFile(path.join(dir, 'base-config.json'), files.baseConfig);
    return await renderButane(await readFile(firstBootTemplate, 'utf8'), dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Quotes a value for bootstrap.env as docs/usage/getting-started.md says:
 * single quotes keep it exactly as written; a value holding a single quote
 * goes in double quotes, backslashes doubled first, then `"` escaped.
 */
export function quoteEnvValue(value: string): string {
  if (!value.includes("'")) return `'${value}'`;
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}
