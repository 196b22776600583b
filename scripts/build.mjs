#!/usr/bin/env node
// Builds the single executable and the release archive:
//   dist/aks-flex-node                                   (Node.js SEA, runs with no Node on the host)
//   dist/aks-flex-node-linux-<arch>.tar.gz               (single member aks-flex-node-linux-<arch>)
//   dist/aks-flex-node-linux-<arch>.tar.gz.sha256
// <arch> is amd64 or arm64, as the Go releases spell it (scripts/release-archive.mjs).
// Usage: node scripts/build.mjs [--version V] [--out DIR] [--no-archive]
// Tests build a second version into another directory to upgrade to it.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { writeReleaseArchive } from './release-archive.mjs';

const workspace = path.resolve(import.meta.dirname, '..');
const { values: flags } = parseArgs({
  options: {
    version: { type: 'string' },
    out: { type: 'string', default: path.join(workspace, 'dist') },
    'no-archive': { type: 'boolean', default: false },
  },
});

// Node's spelling, for the pinned node-linux-<arch> package; release names use amd64/arm64.
const nodeArch = process.arch === 'arm64' ? 'arm64' : 'x64';
const version = flags.version ?? process.env.AKS_FLEX_NODE_VERSION ?? readWorkspaceVersion();
const commit = gitCommit();
const outDir = path.resolve(flags.out);
const workDir = path.join(outDir, '.build');

function readWorkspaceVersion() {
  return JSON.parse(readFileSync(path.join(workspace, 'services/cli/package.json'), 'utf8'))
    .version;
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: workspace,
      encoding: 'utf8',
    }).trim();
  } catch {
    return 'unknown';
  }
}

// Writes the release's Ignition assets, dist/aks-flex-node-bootstrap.{bu,ign}
// (the Butane template and the config rendered from it). The pinned Node.js 24
// runs the TypeScript renderer directly.
function writeIgnitionAssets(node) {
  const renderer = path.join(workspace, 'scripts/ignition/render-release.ts');
  execFileSync(node, [renderer, '--out', outDir], { stdio: ['ignore', 'inherit', 'inherit'] });
}

function log(message) {
  process.stderr.write(`build: ${message}\n`);
}

// The SEA must embed the same Node.js the workspace pins, never whatever node is on PATH.
function pinnedNode() {
  const binary = path.join(workspace, 'node_modules', `node-linux-${nodeArch}`, 'bin', 'node');
  const actual = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  if (!actual.startsWith('v24.')) throw new Error(`${binary} is ${actual}, expected Node.js 24`);
  return binary;
}

// `import text from './file?raw'` embeds a text asset (unit templates, the recovery shim).
const rawTextPlugin = {
  name: 'raw-text',
  setup(builder) {
    builder.onResolve({ filter: /\?raw$/ }, (args) => ({
      path: path.resolve(args.resolveDir, args.path.slice(0, -'?raw'.length)),
      namespace: 'raw-text',
    }));
    builder.onLoad({ filter: /.*/, namespace: 'raw-text' }, (args) => ({
      contents: readFileSync(args.path, 'utf8'),
      loader: 'text',
    }));
  },
};

async function bundle(entry, outfile) {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node24',
    // CommonJS: the SEA runs a CommonJS main. Dynamic imports of bundled modules
    // stay lazy, so each role evaluates only the modules it uses.
    format: 'cjs',
    minifySyntax: true,
    legalComments: 'none',
    plugins: [rawTextPlugin],
    logLevel: 'warning',
    define: {
      __AKS_FLEX_NODE_VERSION__: JSON.stringify(version),
      __AKS_FLEX_NODE_COMMIT__: JSON.stringify(commit),
    },
  });
}

function makeSea(node, script, target) {
  const blob = path.join(workDir, 'sea-prep.blob');
  const config = path.join(workDir, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({
      main: script,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      // V8's memory reducer wakes an idle process every 8 s (the daemon must
      // sleep at least 10 s at a time) and can only be turned off at start-up;
      // a one-shot role ends long before it would act. docs/performance.md.
      execArgv: ['--no-memory-reducer'],
    }),
  );
  execFileSync(node, ['--experimental-sea-config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  copyFileSync(node, target);
  chmodSync(target, 0o755);
  execFileSync(
    node,
    [
      path.join(workspace, 'node_modules', 'postject', 'dist', 'cli.js'),
      target,
      'NODE_SEA_BLOB',
      blob,
      '--sentinel-fuse',
      'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
    ],
    // postject warns about ELF note sections it does not need; its output is
    // shown only when it fails.
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

async function main() {
  const node = pinnedNode();
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const script = path.join(workDir, 'aks-flex-node.cjs');
  log(`bundling version ${version} (commit ${commit}) for linux-${nodeArch}`);
  await bundle(path.join(workspace, 'services/cli/src/main.ts'), script);
  const binary = path.join(outDir, 'aks-flex-node');
  log('making the single executable');
  // Built beside and renamed over the old one: a running copy (a test host,
  // the sandbox) keeps its inode, and a failed build leaves the old binary.
  const staged = path.join(workDir, 'aks-flex-node');
  makeSea(node, script, staged);
  renameSync(staged, binary);
  if (!flags['no-archive']) {
    log(`wrote ${writeReleaseArchive({ binary, outDir, workDir })}`);
  }
  rmSync(workDir, { recursive: true, force: true });
  log(`wrote ${binary}`);
  if (!flags['no-archive']) writeIgnitionAssets(node);
}

await main();
