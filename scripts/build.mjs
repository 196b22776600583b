#!/usr/bin/env node
// Builds the single executable and the release archive:
//   dist/aks-flex-node                                   (Node.js SEA, runs with no Node on the host)
//   dist/aks-flex-node-linux-<arch>.tar.gz               (single member aks-flex-node-linux-<arch>)
//   dist/aks-flex-node-linux-<arch>.tar.gz.sha256
// <arch> is amd64 or arm64, as the Go releases spell it (scripts/release-archive.mjs).
// Usage: node scripts/build.mjs [--version V] [--out DIR] [--no-archive] (--help says more)
// Tests build a second version into another directory to upgrade to it.
// KEEP_WORK=1 keeps DIR/.build: each bundle and its code cache, to see what a role loads.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { writeReleaseArchive } from './release-archive.mjs';

const workspace = path.resolve(import.meta.dirname, '..');
const usage = `usage: node scripts/build.mjs [--version V] [--out DIR] [--no-archive]
Builds the single executable DIR/aks-flex-node and, unless --no-archive, the release
archive DIR/aks-flex-node-linux-<arch>.tar.gz with its .sha256 and the Ignition assets.
  --version V     the version the executable reports (default: AKS_FLEX_NODE_VERSION,
                  else services/cli/package.json)
  --out DIR       where to write (default: dist in the workspace)
  --no-archive    the executable only
  -h, --help      print this and exit
KEEP_WORK=1 keeps DIR/.build: each bundle and its code cache.`;

// Checked before anything is built: --help, or an unknown flag, must not start a 15 s build.
function parseFlags() {
  try {
    return parseArgs({
      options: {
        version: { type: 'string' },
        out: { type: 'string', default: path.join(workspace, 'dist') },
        'no-archive': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    process.stderr.write(`build: ${error.message}\n${usage}\n`);
    process.exit(2);
  }
}

const flags = parseFlags();
if (flags.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}

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

// The executable's main script is the dispatcher; every other role is in a
// bundle of its own (services/cli/src/bundles/*.ts), embedded as an asset and
// evaluated only when one of its roles runs (services/cli/src/roles/role-homes.ts).
// V8 then reads at each start only the role that runs, not the daemon's
// megabytes (DESIGN.md 3, "Start-up cost").
const mainEntry = 'services/cli/src/main.ts';
const bundlesDir = 'services/cli/src/bundles';
// Evaluates a bundle the way the executable does (services/cli/src/roles/run-bundle.ts).
const evaluator = path.join(workspace, 'services/cli/src/roles/evaluate-common-js.ts');
// Libraries only the daemon and the cold roles use: the main bundle or a hot
// role's bundle holding one means a hot role imports a cold one's modules,
// and its every start pays for them.
const coldOnlyPackages = ['fastify', 'execa', 'tar', 'ajv', 'cli-progress', 'semver', 'pino'];
const hotBundles = ['main', 'host-root', 'nspawn-lifecycle', 'status', 'token'];
// Libraries a hot bundle must not hold although other hot roles may: the
// daemon client (shared/api/src/client.ts) checks answers with validators
// generated from the zod schemas (answerValidatorsPlugin), and zod alone costs
// status and the hook about 15 ms of their start.
// The token bundle answers the kubelet from the cache; everything a miss
// needs is in the token-issue bundle (services/cli/src/bundles/token.ts).
const forbiddenInBundle = {
  status: ['zod'],
  'nspawn-lifecycle': ['zod'],
  token: ['@azure', 'node-forge', 'zod'],
};
// Built-in modules a hot bundle must not require: node:crypto and
// node:fs/promises each cost the kubelet's `token` call milliseconds of
// module loading, about a fifth of a Node.js start (bench/token-startup.sh).
// node:fs/promises alone loads 15 modules (readline, the REPL's history),
// about 7% of a Node.js start, which `host-root` paid too: the host root's
// inspection uses shared/fs's path-lookups.ts instead. The nspawn pre-start
// hook reads no file and loads it only in post-start.
const forbiddenBuiltins = {
  token: ['crypto', 'fs/promises'],
  'host-root': ['fs/promises'],
  'nspawn-lifecycle': ['fs/promises'],
};

// shared/api/src/answer-validators.ts generates the validators of the daemon's
// answers when it runs from source; every bundle gets in its place the code
// generated here by the same function (answer-validators-source.ts), so no
// bundle compiles a schema at run time.
const answerValidatorsModule = /\/shared\/api\/src\/answer-validators\.(js|ts)$/;
// The answers (routes.ts's `answer`) each hot role's bundle asks the daemon
// for; `problem`, the error answer, is added to each. Such a bundle holds
// only their validators, and calls each once as it loads, so the code cache
// the build makes by evaluating it holds them compiled: status's validator is
// 64 KB of code, which V8 otherwise compiled at every `status` and the other
// answers' validators were text it decoded for nothing (docs/performance.md).
// A role asking for an answer not listed fails with INTERNAL (client.ts).
// The other bundles hold every validator and compile each when first used.
const answersOfBundle = {
  status: ['status'],
  'nspawn-lifecycle': ['nspawnHooks'],
};
let answerValidatorsGenerator;

async function loadAnswerValidatorsGenerator() {
  const generator = path.join(workDir, 'answer-validators-source.mjs');
  await build({
    entryPoints: [path.join(workspace, 'shared/api/src/answer-validators-source.ts')],
    outfile: generator,
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'warning',
  });
  return import(pathToFileURL(generator).href);
}

async function generateAnswerValidators(answers) {
  answerValidatorsGenerator ??= loadAnswerValidatorsGenerator();
  const { answerValidatorsSource } = await answerValidatorsGenerator;
  // The CommonJS module ajv writes, run once when the bundle loads the module.
  return [
    'const generated = { exports: {} };',
    `(function (module, exports) {${answerValidatorsSource(answers)}\n})(generated, generated.exports);`,
    // Each validator run once on a value it refuses: V8 compiles it while the
    // build evaluates the bundle, and the code cache keeps it compiled.
    ...(answers === undefined
      ? []
      : ['for (const validate of Object.values(generated.exports)) validate({});']),
    'export function answerValidators() {',
    '  return generated.exports;',
    '}',
  ].join('\n');
}

// Generated once per set of answers: every cold bundle shares the full one.
const answerValidatorsCode = new Map();

function answerValidatorsPlugin(name) {
  const listed = answersOfBundle[name];
  const answers = listed === undefined ? undefined : [...listed, 'problem'];
  const key = answers?.join(',') ?? 'all';
  return {
    name: 'answer-validators',
    setup(builder) {
      builder.onLoad({ filter: answerValidatorsModule }, async () => {
        if (!answerValidatorsCode.has(key)) {
          answerValidatorsCode.set(key, generateAnswerValidators(answers));
        }
        return { contents: await answerValidatorsCode.get(key), loader: 'js' };
      });
    },
  };
}

// A node opens no browser: @azure/identity's interactive login loads the
// `open` package, whose PowerShell quoting regex holds characters beyond
// ASCII (checkAsciiOnly). It is replaced by a stub that refuses, so neither
// it nor its helpers reach a bundle.
const noBrowserPlugin = {
  name: 'no-browser',
  setup(builder) {
    builder.onResolve({ filter: /^open$/ }, () => ({ path: 'open', namespace: 'no-browser' }));
    builder.onLoad({ filter: /.*/, namespace: 'no-browser' }, () => ({
      contents:
        'export default function open() { throw new Error("aks-flex-node opens no browser"); }',
      loader: 'js',
    }));
  },
};

// zod's classic API exports every locale's error messages (`z.locales`), 64
// modules of about 300 KB; nothing here reads them, and each bundle holding
// zod kept their text, which the daemon keeps in memory as long as it runs
// (V8 holds a script's whole source). The bundles get the English messages
// only, which zod configures for itself.
const zodEnglishOnlyPlugin = {
  name: 'zod-english-only',
  setup(builder) {
    builder.onLoad({ filter: /\/node_modules\/zod\/v4\/locales\/index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: 'js',
    }));
  },
};

// Every bundle entry stays out of the bundles that import it: the executable
// evaluates its asset instead (run-bundle.ts), so each is built only once.
const bundleEntriesExternal = {
  name: 'bundle-entries-external',
  setup(builder) {
    builder.onResolve({ filter: /\/bundles\/[a-z-]+\.js$/ }, (args) => ({
      path: args.path,
      external: true,
    }));
  },
};

function bundleEntries() {
  const names = readdirSync(path.join(workspace, bundlesDir))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .map((file) => file.slice(0, -'.ts'.length));
  return [
    { name: 'main', entry: mainEntry },
    ...names.map((name) => ({ name, entry: `${bundlesDir}/${name}.ts` })),
  ];
}

// The bundles of the roles that are not hot (the daemon's among them) lose
// their whitespace and comments: V8 keeps a bundle's whole source as long as
// the process lives, to compile its functions lazily, so the daemon's
// resident memory grows with the text one for one (docs/performance.md).
// Names stay as written, so stack traces in the journal still name the
// functions; their columns point into long lines (KEEP_WORK=1 keeps the text).
function minifiesWhitespace(name) {
  return !hotBundles.includes(name);
}

async function bundle(name, entry, outfile) {
  const result = await build({
    entryPoints: [path.join(workspace, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node24',
    // CommonJS: the SEA runs a CommonJS main. Dynamic imports of bundled modules
    // stay lazy, so each role evaluates only the modules it uses.
    format: 'cjs',
    minifySyntax: true,
    minifyWhitespace: minifiesWhitespace(name),
    legalComments: 'none',
    plugins: [
      rawTextPlugin,
      bundleEntriesExternal,
      answerValidatorsPlugin(name),
      noBrowserPlugin,
      zodEnglishOnlyPlugin,
    ],
    logLevel: 'warning',
    metafile: true,
    define: {
      __AKS_FLEX_NODE_VERSION__: JSON.stringify(version),
      __AKS_FLEX_NODE_COMMIT__: JSON.stringify(commit),
    },
  });
  return result.metafile;
}

// Fails the build when a hot bundle holds a library only cold roles use, or
// one forbidden in it (forbiddenInBundle).
function checkHotBundle(name, metafile) {
  // The output's inputs, not metafile.inputs: those list modules esbuild read and then shook out.
  const inputs = Object.values(metafile.outputs).flatMap((output) =>
    Object.entries(output.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([file]) => file),
  );
  const holds = (library) => inputs.some((input) => input.includes(`/node_modules/${library}/`));
  const found = coldOnlyPackages.filter(holds);
  if (found.length > 0) {
    throw new Error(
      `the ${name} bundle holds ${found.join(', ')}, which only cold roles use; ` +
        'import it from a cold role, or lazily from where it is needed',
    );
  }
  const forbidden = (forbiddenInBundle[name] ?? []).filter(holds);
  if (forbidden.length > 0) {
    throw new Error(
      `the ${name} bundle holds ${forbidden.join(', ')}, which costs its start-up; ` +
        'check answers with the generated validators (shared/api/src/answer-validators.ts)',
    );
  }
}

// The most a hot bundle may hold, in bytes: about a quarter above its size
// when its answers' validators were cut to its own (answersOfBundle), so a
// bundle that takes in every validator again, or a library, fails the build
// rather than costing each start. Raise one only with a measurement
// (bench/nspawn-pre-start.sh) beside it.
const maxBundleBytes = { status: 160_000, 'nspawn-lifecycle': 64_000 };

function checkBundleSize({ name, script }) {
  const bytes = statSync(script).size;
  const max = maxBundleBytes[name];
  if (max !== undefined && bytes > max) {
    throw new Error(
      `the ${name} bundle is ${bytes} bytes, more than the ${max} it may hold; ` +
        'see what it took in with KEEP_WORK=1 (dist/.build), and load it lazily or from another bundle',
    );
  }
}

function checkBuiltins({ name, script }) {
  const text = readFileSync(script, 'utf8');
  const found = (forbiddenBuiltins[name] ?? []).filter((id) =>
    new RegExp(`require\\("(node:)?${id}"\\)`).test(text),
  );
  if (found.length > 0) {
    throw new Error(
      `the ${name} bundle requires ${found.map((id) => `node:${id}`).join(', ')}, which costs its start-up; ` +
        (name === 'token'
          ? 'move what needs it to the bundle a cache miss runs (token-issue)'
          : "look paths up with shared/fs's path-lookups.ts, or load it where it is used, " +
            "with process.getBuiltinModule('node:...')"),
    );
  }
}

// V8 keeps a source with one character beyond Latin-1 as a two-byte string:
// a dash in a comment doubled the memory of the daemon's 3 MB bundle.
// esbuild escapes strings (charset ascii); this catches the rest, and asks
// for ASCII, which is simpler to check and to keep.
function checkAsciiOnly({ name, script }) {
  const bytes = readFileSync(script);
  const at = bytes.findIndex((byte) => byte > 0x7f);
  if (at !== -1) {
    const context = bytes.subarray(Math.max(0, at - 40), at + 10).toString('utf8');
    throw new Error(
      `the ${name} bundle holds a byte beyond ASCII at offset ${at} ` +
        `(${JSON.stringify(context)}), ` +
        'which doubles the memory V8 keeps for its source; escape it, or keep it out of the bundle',
    );
  }
}

// V8's code cache of each asset bundle, made by evaluating it once with the
// pinned Node: taken after the evaluation, it holds the functions the
// bundle's modules ran at load (zod's, for instance), which a cache of the
// bare compile lacks. The executable evaluates the bundle with it.
// The executable evaluates asset bundles with vm, whose import() support is
// experimental and warns; bundles load built-in modules with require or
// process.getBuiltinModule instead. esbuild prints strings with double
// quotes, so comments quoting import('...') do not match. The imports of
// other bundles' sources are allowed: they run only from source (run-bundle.ts).
function checkNoDynamicImport({ name, script }) {
  const found = readFileSync(script, 'utf8').match(/\bimport\("(?!\.\.\/bundles\/)[^"]*"\)/);
  if (found !== null) {
    throw new Error(
      `the ${name} bundle keeps ${found[0]}, which the executable cannot run in a bundle; ` +
        "load a built-in module with process.getBuiltinModule('node:...') instead",
    );
  }
}

// V8's memory reducer wakes an idle process every 8 s (the daemon must
// sleep at least 10 s at a time) and can only be turned off at start-up;
// a one-shot role ends long before it would act. docs/performance.md.
// --disable-sigusr1: every role runs as root, and SIGUSR1 (which log
// rotation and ops scripts send) would otherwise open the inspector on
// 127.0.0.1:9229, where any local user can run code as root. Node parses
// these before it installs its signal handlers, so no window is left; the
// signal stays blocked and pending, and the process keeps running
// (docs/hardening.md, "Signals and the inspector").
// The code caches are made under the same flags: V8 rejects a cache made
// under flags that differ in what it checks, and the roles would then
// compile from scratch without a word.
// No flag is added here for the daemon alone: each changes V8's flag hash
// for every role (run-daemon.ts, collectAllGarbage).
const seaExecArgv = ['--no-memory-reducer', '--disable-sigusr1'];

function writeCodeCaches(node, assets) {
  const script = `
    import { readFileSync, writeFileSync } from 'node:fs';
    import { createRequire } from 'node:module';
    import { compileCommonJs, runCommonJs } from ${JSON.stringify(pathToFileURL(evaluator).href)};
    const require = createRequire(import.meta.url);
    for (const [source, cache] of JSON.parse(process.argv[1])) {
      const compiled = compileCommonJs(readFileSync(source, 'utf8'), { filename: source });
      runCommonJs(compiled, require);
      writeFileSync(cache, compiled.createCachedData());
    }`;
  const pairs = assets.map(({ script: source, codeCache }) => [source, codeCache]);
  execFileSync(node, [...seaExecArgv, '--input-type=module', '-e', script, JSON.stringify(pairs)], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

function makeSea(node, { main, assets }, target) {
  const blob = path.join(workDir, 'sea-prep.blob');
  const config = path.join(workDir, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({
      main,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      assets: Object.fromEntries(
        assets.flatMap(({ name, script, codeCache }) => [
          [`${name}.cjs`, script],
          [`${name}.code-cache`, codeCache],
        ]),
      ),
      execArgv: seaExecArgv,
      // Nothing extends those flags: by default a SEA honours NODE_OPTIONS,
      // and NODE_OPTIONS=--inspect (or --require) in a root shell's or a
      // unit's environment would open the inspector (or run code) in the
      // daemon or the nspawn hook. "none" ignores NODE_OPTIONS, and
      // --node-options on the command line stays an ordinary argument.
      execArgvExtension: 'none',
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
  log(`bundling version ${version} (commit ${commit}) for linux-${nodeArch}`);
  const built = await Promise.all(
    bundleEntries().map(async ({ name, entry }) => {
      const script = path.join(workDir, `${name}.cjs`);
      const metafile = await bundle(name, entry, script);
      if (hotBundles.includes(name)) checkHotBundle(name, metafile);
      return { name, script, codeCache: path.join(workDir, `${name}.code-cache`) };
    }),
  );
  const main = built.find(({ name }) => name === 'main').script;
  const assets = built.filter(({ name }) => name !== 'main');
  assets.forEach(checkNoDynamicImport);
  assets.forEach(checkAsciiOnly);
  assets.forEach(checkBuiltins);
  assets.forEach(checkBundleSize);
  writeCodeCaches(node, assets);
  const binary = path.join(outDir, 'aks-flex-node');
  log('making the single executable');
  // Built beside and renamed over the old one: a running copy (a test host,
  // the sandbox) keeps its inode, and a failed build leaves the old binary.
  const staged = path.join(workDir, 'aks-flex-node');
  makeSea(node, { main, assets }, staged);
  renameSync(staged, binary);
  if (!flags['no-archive']) {
    log(`wrote ${writeReleaseArchive({ binary, outDir, workDir })}`);
  }
  if (process.env.KEEP_WORK !== '1') rmSync(workDir, { recursive: true, force: true });
  log(`wrote ${binary}`);
  if (!flags['no-archive']) writeIgnitionAssets(node);
}

await main();
