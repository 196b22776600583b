// Writes the Ignition release assets beside the executable:
//   <out>/aks-flex-node-bootstrap.bu   the Butane template, as operators render it
//   <out>/aks-flex-node-bootstrap.ign  the template rendered with this release's
//     bootstrap.sh, base-config.json `{}` and the commented example bootstrap.env,
//     for operators without butane, who replace the two settings files in it
//     (docs/usage/getting-started.md).
// Run by scripts/build.mjs with the workspace's Node.js 24, which runs
// TypeScript directly. Usage: node render-release.ts --out DIR
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { renderButane } from './render-butane.ts';

const scripts = path.resolve(import.meta.dirname, '..');
export const templateFile = path.join(scripts, 'aks-flex-node-bootstrap.bu');
export const bootstrapScript = path.join(scripts, 'bootstrap.sh');
export const exampleEnv = path.join(scripts, 'ignition', 'bootstrap.env.example');

/** Renders the template with the release's files; resolves to the .ign path written. */
export async function writeReleaseAssets(outDir: string): Promise<string> {
  const filesDir = await mkdtemp(path.join(os.tmpdir(), 'aks-flex-node-ignition-'));
  try {
    await copyFile(bootstrapScript, path.join(filesDir, 'bootstrap.sh'));
    await copyFile(exampleEnv, path.join(filesDir, 'bootstrap.env'));
    await writeFile(path.join(filesDir, 'base-config.json'), '{}\n');
    const config = await renderButane(readFileSync(templateFile, 'utf8'), filesDir);
    await copyFile(templateFile, path.join(outDir, path.basename(templateFile)));
    const ign = path.join(outDir, 'aks-flex-node-bootstrap.ign');
    await writeFile(ign, `${JSON.stringify(config)}\n`);
    return ign;
  } finally {
    await rm(filesDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  if (values.out === undefined) throw new Error('usage: render-release.ts --out DIR');
  // The release's bootstrap.sh is embedded unchanged; without it there is no
  // template to publish, and the build says so rather than shipping a stand-in.
  if (!existsSync(bootstrapScript)) {
    process.stderr.write(`build: warning: ${bootstrapScript} is missing; no Ignition assets\n`);
    return;
  }
  process.stderr.write(`build: wrote ${await writeReleaseAssets(path.resolve(values.out))}\n`);
}

if (import.meta.main) await main();
