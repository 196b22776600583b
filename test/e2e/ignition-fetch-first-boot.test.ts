// The documented Ignition first boot that fetches its join data from AKS
// (spec/scripts.md 5.5: base-config.json is `{}`, bootstrap.env sets
// AKS_FLEX_NODE_FETCH_BOOTSTRAP_DATA=true with the cluster and pool), under
// real systemd on a fresh acl host (read-only /usr). The unit runs
// bootstrap.sh, which runs the installed agent's fetch-bootstrap-data: a
// token from IMDS for a user-assigned identity, then AKS's listBootstrapData.
// IMDS and ARM are remote services that cannot be reached from here: local
// stand-ins run inside the host (harness/azure-stand-ins.ts).
import { copyFileSync, mkdirSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hostPaths, unitNames } from '@aks-flex-node/layout';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  createReleaseDir,
  productBinary,
  productPaths,
  waitForJournal,
  runOrThrow,
  waitForUnitState,
  withHost,
  writeIgnitionToDisk,
} from './harness/index.js';
import {
  fetchBootstrapEnv,
  fetchTarget,
  layAzureStandIns,
  standInsDir,
  standInsEntry,
  standInsUnit,
} from './harness/azure-stand-ins.js';
import {
  bootstrapScript,
  goArchiveName,
  packGoReleaseArchive,
  quoteEnvValue,
  renderFirstBoot,
  sha256File,
} from './harness/first-boot.js';

const unit = unitNames.bootstrap;
const releaseDir = '/var/tmp/release';

let work: string;
let archive: string;
let sha256: string;
let standIns: string;

describeWithProduct(
  'ignition: first boot with base config {} fetches its join data from AKS',
  () => {
    beforeAll(async () => {
      work = await createReleaseDir();
      archive = await packGoReleaseArchive(work, productBinary);
      sha256 = await sha256File(archive);
      standIns = path.join(work, 'azure-services.mjs');
      await build({
        entryPoints: [standInsEntry],
        outfile: standIns,
        bundle: true,
        platform: 'node',
        format: 'esm',
        logLevel: 'warning',
      });
    });

    afterAll(async () => {
      await rm(work, { recursive: true, force: true });
    });

    it('issue27 the Ignition unit fetches with MSI, joins, and the token is in the 0600 config only', async () => {
      const env = [
        `AKS_FLEX_NODE_AGENT_URL=${quoteEnvValue(`file://${releaseDir}/{{ARCHIVE_NAME}}`)}`,
        `AKS_FLEX_NODE_AGENT_SHA256=${sha256}`,
        ...fetchBootstrapEnv(),
        '',
      ].join('\n');
      const config = await renderFirstBoot({
        script: await readFile(bootstrapScript, 'utf8'),
        env,
        baseConfig: '{}\n',
      });
      await withHost(
        {
          variant: 'acl',
          name: 'ign-fetch',
          // Ignition provisions this host at its first boot, before the harness
          // could lay a node out; one laid out afterwards would overwrite it.
          node: { empty: 'the first boot provisions the node itself' },
          bootTimeoutMs: 300_000,
          provision: (merged) => {
            writeIgnitionToDisk(merged, config);
            mkdirSync(path.join(merged, releaseDir), { recursive: true });
            copyFileSync(archive, path.join(merged, releaseDir, goArchiveName));
            layAzureStandIns(merged, standIns);
          },
        },
        async (host) => {
          await waitForUnitState(host, unit, 'active', { timeoutMs: 180_000 });
          await waitForUnitState(host, unitNames.agent, 'active');
          await runOrThrow(host, ['test', '-x', productPaths.installedBinary]);
          const mode = await runOrThrow(host, ['stat', '-c', '%a %U', hostPaths.configFile]);
          expect(mode.stdout.trim()).toBe('600 root');
          const fetched = await runOrThrow(host, [
            'jq',
            '-c',
            '[.azure.bootstrapToken.token, .azure.managedIdentity, .azure.targetCluster.resourceId, .azure.targetAgentPoolName, .components.kubernetes]',
            hostPaths.configFile,
          ]);
          expect(JSON.parse(fetched.stdout)).toEqual([
            fetchTarget.freshToken,
            { clientId: fetchTarget.clientId },
            fetchTarget.cluster,
            fetchTarget.agentPool,
            '1.35.6',
          ]);
          const wrote = `wrote the bootstrap data of agent pool ${fetchTarget.agentPool}`;
          const journal = await waitForJournal(host, unit, wrote);
          expect(journal).toContain('fetching fresh bootstrap data from AKS RP');
          expect(journal).toContain(wrote);
          // Neither the join token nor the ARM token is in any journal line or
          // file outside the config; the stand-ins' own config, which holds the
          // answer they serve, goes first.
          await runOrThrow(host, ['systemctl', 'stop', standInsUnit]);
          await runOrThrow(host, ['rm', '-rf', standInsDir]);
          const everything = await host.run(['journalctl', '--no-pager', '-o', 'cat']);
          expect(everything.stdout).toContain('fetching fresh bootstrap data from AKS RP');
          for (const secret of [fetchTarget.freshToken, `imds.${fetchTarget.clientId}.`]) {
            expect(everything.stdout).not.toContain(secret);
            const files = await host.run(['grep', '-rlF', secret, '/var', '/run', '/tmp', '/opt']);
            expect(files.stdout).toBe('');
          }
          // The first-boot inputs went once bootstrap succeeded.
          expect((await host.run(['test', '-e', hostPaths.firstBootDir])).exitCode).not.toBe(0);
        },
      );
    });
  },
);
