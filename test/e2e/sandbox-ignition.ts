// `pnpm sandbox --ignition`: boots an acl host (read-only /usr) provisioned
// from scripts/aks-flex-node-bootstrap.bu, rendered with the release's
// bootstrap.sh, base config `{}` and a bootstrap.env that fetches the join
// data from AKS as the VM's managed identity, and shows it joining on first
// boot: the first-boot unit's journal, the layout and `aks-flex-node
// status`, then a reboot that skips the unit. The agent comes from a
// Go-named archive packed from the product; IMDS and ARM are local stand-ins
// inside the host (harness/azure-stand-ins.ts), since Azure is out of reach.
import { copyFileSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { hostPaths, unitNames } from '@aks-flex-node/layout';
import { fetchBootstrapEnv, layAzureStandIns } from './harness/azure-stand-ins.js';
import type { Host } from './harness/index.js';
import {
  formatCommandResult,
  productBinary,
  productPaths,
  readJournal,
  readLayoutTree,
  waitForUnitState,
  withHost,
  writeIgnitionToDisk,
} from './harness/index.js';
import {
  bootstrapScript,
  goArchiveName,
  hasBootstrapScript,
  packGoReleaseArchive,
  readUnitProperties,
  renderFirstBoot,
  sha256File,
} from './harness/first-boot.js';

const releaseDir = '/var/tmp/release';

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

async function showStatus(host: Host, heading: string): Promise<void> {
  print(`\n=== ${heading} ===\n--- layout ---\n${await readLayoutTree(host)}`);
  const status = await host.run([productPaths.installedBinary, 'status'], { timeoutMs: 30_000 });
  print(`--- aks-flex-node status ---\n${formatCommandResult('aks-flex-node status', status)}`);
}

/** The settings an operator writes, as getting-started.md shows them. */
function bootstrapEnv(sha256: string): string {
  return [
    `AKS_FLEX_NODE_AGENT_URL='file://${releaseDir}/{{ARCHIVE_NAME}}'`,
    `AKS_FLEX_NODE_AGENT_SHA256=${sha256}`,
    `AKS_FLEX_NODE_CONFIG_OVERRIDES='{"agent":{"logLevel":"info"}}'`,
    ...fetchBootstrapEnv(),
    '',
  ].join('\n');
}

/** The documented base config when the join data is fetched from AKS. */
const baseConfig = '{}\n';

/**
 * Runs the Ignition sandbox; `workDir` receives the archive and holds
 * azure-services.mjs, the stand-ins scripts/sandbox.sh bundled. Resolves to an exit code.
 */
export async function runIgnitionSandbox(workDir: string): Promise<number> {
  if (!hasBootstrapScript()) {
    process.stderr.write(`sandbox: ${bootstrapScript} is missing; --ignition embeds it\n`);
    return 1;
  }
  const archive = await packGoReleaseArchive(workDir, productBinary);
  const env = bootstrapEnv(await sha256File(archive));
  const config = await renderFirstBoot({
    script: await readFile(bootstrapScript, 'utf8'),
    env,
    baseConfig,
  });
  print(`=== 1. the Ignition config, rendered from scripts/aks-flex-node-bootstrap.bu ===`);
  for (const file of config.storage.files) print(`file ${file.mode.toString(8)} ${file.path}`);
  for (const unit of config.systemd.units)
    print(`unit ${unit.name} (enabled: ${String(unit.enabled)})`);
  print(`--- bootstrap.env ---\n${env}--- base-config.json ---\n${baseConfig}`);
  await withHost(
    {
      variant: 'acl',
      name: 'sandbox-ign',
      // Ignition provisions this host at its first boot, before the harness
      // could lay a node out; one laid out afterwards would overwrite it.
      node: { empty: 'the first boot provisions the node itself' },
      bootTimeoutMs: 300_000,
      provision: (merged) => {
        writeIgnitionToDisk(merged, config);
        mkdirSync(path.join(merged, releaseDir), { recursive: true });
        copyFileSync(archive, path.join(merged, releaseDir, goArchiveName));
        layAzureStandIns(merged, path.join(workDir, 'azure-services.mjs'));
      },
    },
    async (host) => {
      await waitForUnitState(host, unitNames.bootstrap, 'active', { timeoutMs: 180_000 });
      print(`\n=== 2. first boot (${host.bootState()}) ===`);
      print(
        `--- journalctl -u ${unitNames.bootstrap} ---\n${await readJournal(host, unitNames.bootstrap)}`,
      );
      await waitForUnitState(host, unitNames.agent, 'active');
      await showStatus(host, `the host joined; ${hostPaths.firstBootDir} is gone`);
      await host.reboot();
      await waitForUnitState(host, unitNames.agent, 'active');
      const props = await readUnitProperties(host, unitNames.bootstrap, [
        'ConditionResult',
        'ActiveState',
      ]);
      print(
        `\n=== 3. after a reboot: ${unitNames.bootstrap} ConditionResult=${props.get('ConditionResult') ?? ''} ` +
          `ActiveState=${props.get('ActiveState') ?? ''} (skipped: the agent unit exists) ===`,
      );
      await showStatus(host, 'the agent runs on its own');
    },
  );
  return 0;
}
