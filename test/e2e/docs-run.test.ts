import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readDocBlocks, type DocBlock } from '../docs/doc-blocks.js';
import {
  docPrelude,
  docSteps,
  docSubstitutions,
  docsMirror,
  docsVersion,
} from './docs-run-plan.js';
import { repoRoot } from './harness/e2e-paths.js';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  copyIn,
  createReleaseDir,
  expectNothingOfTheAgent,
  expectResetHost,
  packGoNamedArchive,
  productBinary,
  productPaths,
  productUnits,
  refuseSharedNetwork,
  runOrThrow,
  waitForStartSequence,
  waitForUnitState,
  withHost,
  writeHostFile,
  type Host,
} from './harness/index.js';

// Docs that run (issue 24): every `<!-- run: ID -->` block of README.md and
// docs/usage/*.md, read from the pages now, runs on one booted real-shaped
// node in the order of test/e2e/docs-run-plan.ts, with only the documented
// substitutions (GitHub to a file:// mirror in the host, `sudo` to root).
// Each block must exit as the docs say and print what they show; what an
// operator does between blocks as prose (start the agent, break both slots
// before the reinstall) is done here, named below.

const archiveFile = 'aks-flex-node-linux-amd64.tar.gz';

/** The pages' blocks, read when the suite starts. */
let blocks: DocBlock[] = [];

function runBlock(id: string): DocBlock {
  const block = blocks.find((b) => b.marking.kind === 'run' && b.marking.id === id);
  if (block === undefined) throw new Error(`no doc block is marked run: ${id}`);
  return block;
}

describeWithProduct('docs that run: the operator pages, block by block, on a real node', () => {
  let releaseDir = '';
  let archive = '';

  beforeAll(async () => {
    blocks = await readDocBlocks(repoRoot);
    releaseDir = await createReleaseDir();
    archive = await packGoNamedArchive(releaseDir);
  });

  afterAll(async () => {
    if (releaseDir !== '') await rm(releaseDir, { recursive: true, force: true });
  });

  it('install, where a host stands, the reinstall of a broken host, reset and uninstall, as printed', async () => {
    await withHost({ name: 'docs' }, async (host) => {
      await layOutMirror(host, archive);
      let installDir = '';
      for (const step of docSteps) {
        const block = runBlock(step.id);
        const where = `${block.file}:${block.line} (${step.id})`;
        await before[step.id]?.(host);
        if (step.kind === 'file') {
          await writeHostFile(host, step.path, block.text, 0o600);
          continue;
        }
        const script = `cd ${step.path}\nset -e\n${docPrelude}\n${substituted(block.text)}`;
        const result = await host.run(['bash', '-c', script], { timeoutMs: 240_000 });
        const output = `${result.stdout}${result.stderr}`;
        expect(result.exitCode, `${where} exited ${result.exitCode}:\n${output}`).toBe(
          step.exitCode ?? 0,
        );
        for (const line of step.output ?? []) expect(output, where).toMatch(line);
        if (step.id === 'install') {
          installDir = /Binary installed to (\S+)\/aks-flex-node/.exec(output)?.[1] ?? '';
        }
        await after[step.id]?.(host, { block, output, installDir });
      }
    });
  });
});

/** The block as it runs: the documented substitutions, nothing else. */
function substituted(text: string): string {
  return docSubstitutions.reduce((out, { from, to }) => out.replaceAll(from, to), text);
}

/** The host's stand-ins for GitHub, and the files the pages have the operator fetch first. */
async function layOutMirror(host: Host, archive: string): Promise<void> {
  const scripts = path.join(repoRoot, 'scripts');
  await copyIn(
    host,
    path.join(scripts, 'install.sh'),
    `${docsMirror}/raw/${docsVersion}/scripts/install.sh`,
    0o644,
  );
  for (const release of [`download/${docsVersion}`, 'latest/download']) {
    await copyIn(host, archive, `${docsMirror}/releases/${release}/${archiveFile}`, 0o644);
  }
  // operations.md: "download scripts/uninstall.sh of the installed release".
  await copyIn(host, path.join(scripts, 'uninstall.sh'), '/root/release/uninstall.sh', 0o644);
  // getting-started.md: the release's .ign (beside the executable the build wrote) and `{}` as the base config.
  const ign = path.join(path.dirname(productBinary), 'aks-flex-node-bootstrap.ign');
  await copyIn(host, ign, '/root/node/aks-flex-node-bootstrap.ign', 0o600);
  await writeHostFile(host, '/root/node/base-config.json', '{}\n', 0o600);
}

/** What the operator does before a block, as the page's prose says. */
const before: Record<string, (host: Host) => Promise<void>> = {
  // "If both slots are broken (a torn copy, a disk error)": the agent then
  // fails to start until it reaches its start limit, and systemd fails its
  // socket with it (service-start-limit-hit), so the reinstall must bring
  // back both. Stopping both stands for that (the limit takes 5 starts 30 s
  // apart), and a stopped agent's slot can be written (no ETXTBSY).
  reinstall: async (host) => {
    await runOrThrow(host, ['systemctl', 'stop', productUnits.agentSocket, productUnits.agent]);
    await runOrThrow(host, ['truncate', '-s', '4096', productPaths.blueSlot]);
  },
  // "The daemon's own start takes the lock too": the reinstall's daemon may
  // still be running its start sequence, and a reset then is refused (exit 4).
  reset: async (host) => {
    await refuseSharedNetwork(host, 'a reset');
    await waitForStartSequence(host);
  },
  uninstall: (host) => refuseSharedNetwork(host, 'uninstall.sh'),
};

interface AfterContext {
  block: DocBlock;
  output: string;
  installDir: string;
}

/** What the page says follows a block, checked. */
const after: Record<string, (host: Host, context: AfterContext) => Promise<void>> = {
  // The settings file is in node.ign, exactly as written.
  'ign-with-jq': async (host) => {
    const node = JSON.parse((await runOrThrow(host, ['cat', '/root/node/node.ign'])).stdout) as {
      storage: { files: { path: string; contents: { source: string } }[] };
    };
    const decoded = (file: string): string =>
      Buffer.from(
        node.storage.files
          .find((f) => f.path === file)
          ?.contents.source.replace(/^data:;base64,/, '') ?? '',
        'base64',
      ).toString();
    expect(decoded('/etc/aks-flex-node/first-boot/bootstrap.env')).toBe(
      runBlock('bootstrap-env').text,
    );
    expect(decoded('/etc/aks-flex-node/first-boot/base-config.json')).toBe('{}\n');
  },
  // "Then write the config and run start": with no config on the host, start writes the default.
  install: async (host, { installDir }) => {
    expect(installDir).not.toBe('');
    await runOrThrow(host, [`${installDir}/aks-flex-node`, 'start'], { timeoutMs: 180_000 });
    await waitForUnitState(host, productUnits.agent, 'active');
  },
  // "the restart brings the agent back".
  reinstall: async (host) => {
    await waitForUnitState(host, productUnits.agent, 'active');
    // The agent answers on its socket again, which the unit alone did not bring back.
    await runOrThrow(host, [productPaths.installedBinary, 'status']);
    await expectCrashLoopExplained(host);
    await expectLogDirWritten(host);
  },
  reset: async (host) => {
    await expectResetHost(host);
    await expectRejoinHintAfterReset(host);
  },
  uninstall: async (host) => {
    await expectNothingOfTheAgent(host);
  },
};

/**
 * Issue 24 item 7: a broken installed config makes the agent exit at every
 * start. `status` and `start` must notice the unit restarting and say why
 * (the config's path and fault) with exit 2 (INVALID_CONFIG is a usage
 * error in shared/api/src/error-table.ts), not wait out their 10 s and 60 s.
 */
async function expectCrashLoopExplained(host: Host): Promise<void> {
  const config = '/etc/aks-flex-node/config.json';
  await runOrThrow(host, ['cp', '-p', config, '/root/config.json.good']);
  await writeHostFile(host, config, '{"agent":{"logLevel":42}}\n', 0o600);
  await runOrThrow(host, ['systemctl', 'restart', productUnits.agent]);
  await runOrThrow(
    host,
    [
      'bash',
      '-c',
      `until [ "$(systemctl show -P SubState ${productUnits.agent})" = auto-restart ]; do sleep 0.2; done`,
    ],
    { timeoutMs: 30_000 },
  );
  for (const command of ['status', 'start']) {
    const began = Date.now();
    const result = await host.run([productPaths.installedBinary, command], { timeoutMs: 90_000 });
    const seconds = (Date.now() - began) / 1000;
    expect(result.exitCode, `${command}: ${result.stderr}`).toBe(2);
    expect(result.stderr).toContain(config);
    expect(result.stderr).toContain('logLevel');
    // The client's own timeouts are 10 s (status) and 60 s (start); the watch answers in about 2 s.
    expect(seconds, command).toBeLessThan(8);
  }
  await runOrThrow(host, ['cp', '-p', '/root/config.json.good', config]);
  await runOrThrow(host, ['systemctl', 'restart', productUnits.agent]);
  await waitForUnitState(host, productUnits.agent, 'active');
}

/**
 * Issue 24 item 7: `agent.logDir` (install.sh's example config names
 * /var/log/aks-flex-node) gets the daemon's log in aks-flex-node.log beside
 * the journal, as the Go releases wrote it, under the unit's confinement.
 */
async function expectLogDirWritten(host: Host): Promise<void> {
  const config = '/etc/aks-flex-node/config.json';
  await writeHostFile(
    host,
    config,
    '{"agent":{"logLevel":"info","logDir":"/var/log/aks-flex-node"}}\n',
    0o600,
  );
  await runOrThrow(host, ['systemctl', 'restart', productUnits.agent]);
  await runOrThrow(host, [productPaths.installedBinary, 'status']);
  const file = await runOrThrow(host, ['cat', '/var/log/aks-flex-node/aks-flex-node.log']);
  expect(file.stdout).toContain('"msg":"daemon serving"');
}

/**
 * Issue 24 item 5: after a reset, `status` says the host was reset (exit 5,
 * no daemon, per shared/api/src/error-table.ts) and its hint is a command
 * that runs as printed: the rejoin, which then brings the agent back.
 */
async function expectRejoinHintAfterReset(host: Host): Promise<void> {
  const status = await host.run([productPaths.installedBinary, 'status']);
  expect(status.exitCode, status.stderr).toBe(5);
  expect(status.stderr).toMatch(/^error: no agent runs on this host: reset \S+ removed its units/m);
  const rejoin = /^hint: to rejoin, run `([^`]+)`/m.exec(status.stderr)?.[1];
  expect(rejoin, status.stderr).toBe(`${productPaths.installedBinary} start`);
  await runOrThrow(host, ['bash', '-c', rejoin ?? 'false'], { timeoutMs: 180_000 });
  await waitForUnitState(host, productUnits.agent, 'active');
  await runOrThrow(host, [productPaths.installedBinary, 'status']);
}
