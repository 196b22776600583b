import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { IgnitionConfig } from '../../../scripts/ignition/render-butane.js';
import { renderButane } from '../../../scripts/ignition/render-butane.js';
import { repoRoot } from './e2e-paths.js';
import type { Host } from './host.js';
import { runOrThrow } from './run-or-throw.js';
import { formatCommandResult, runProcess } from './run-process.js';

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

/** The Go releases' spelling of the architecture, which bootstrap.sh expects in archive names. */
export const goArch = process.arch === 'arm64' ? 'arm64' : 'amd64';

/** The release archive's name as bootstrap.sh downloads it (`{{ARCHIVE_NAME}}`). */
export const goArchiveName = `aks-flex-node-linux-${goArch}.tar.gz`;

/**
 * Packs an executable as the Go releases name their archive: one regular
 * file `aks-flex-node-linux-<arch>`, mode 0755, owner 0, no directory entry,
 * whatever name the build in this checkout gives its own archive.
 */
export async function packGoReleaseArchive(dir: string, executable: string): Promise<string> {
  const member = `aks-flex-node-linux-${goArch}`;
  const archive = path.join(dir, goArchiveName);
  const argv = [
    'tar',
    '-C',
    path.dirname(executable),
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--mode=0755',
    `--transform=s,^${path.basename(executable)}$,${member},`,
    // gzip's fastest level, as release-archive.ts packs for the same reason.
    '--use-compress-program=gzip -1',
    '-cf',
    archive,
    path.basename(executable),
  ];
  const result = await runProcess(argv, { timeoutMs: 120_000 });
  if (result.exitCode !== 0) {
    throw new Error(`pack ${archive}\n${formatCommandResult(argv.join(' '), result)}`);
  }
  return archive;
}

/** The archive's SHA-256 in hex, for AKS_FLEX_NODE_AGENT_SHA256. */
export async function sha256File(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

/** Unit properties by name, as `systemctl show` reports them. */
export async function readUnitProperties(
  host: Host,
  unit: string,
  names: readonly string[],
): Promise<Map<string, string>> {
  const result = await runOrThrow(host, [
    'systemctl',
    'show',
    `--property=${names.join(',')}`,
    '--',
    unit,
  ]);
  return new Map(
    result.stdout
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}
