// The documented Ignition first boot that fetches its join data from AKS
// (spec/scripts.md 5.5: base-config.json is `{}`, bootstrap.env sets
// AKS_FLEX_NODE_FETCH_BOOTSTRAP_DATA=true with the cluster and pool), under
// real systemd on a fresh acl host (read-only /usr). The unit runs
// bootstrap.sh, which runs the installed agent's fetch-bootstrap-data: a
// token from IMDS for a user-assigned identity, then AKS's listBootstrapData.
// IMDS and ARM are remote services that cannot be reached from here, and the
// host has a private network: local stand-ins that speak their protocols
// (test/support/azure-services-main.ts) run inside the host, as a unit of the
// test's, started before the first-boot unit.
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hostPaths, unitNames } from '@aks-flex-node/layout';
import { aclBaseConfig } from '../../scripts/ignition/acl-base-config.js';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  createReleaseDir,
  productBinary,
  productPaths,
  readJournal,
  runOrThrow,
  waitForUnitState,
  withHost,
  writeIgnitionToDisk,
} from './harness/index.js';
import {
  bootstrapScript,
  goArchiveName,
  packGoReleaseArchive,
  quoteEnvValue,
  renderFirstBoot,
  sha256File,
} from './harness/first-boot.js';
import { repoRoot } from './harness/e2e-paths.js';

const unit = unitNames.bootstrap;
const releaseDir = '/var/tmp/release';
const servicesDir = '/var/tmp/azure-services';
const servicesUnit = 'e2e-azure-services.service';
const cluster =
  '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/cluster';
const freshToken = 'fresh1.0123456789abcdef';
const clientId = 'e2e-user-assigned';
/** Fixed ports inside the host: bootstrap.env is written before the servers start. */
const ports = { authorityHost: 8401, imdsEndpoint: 8402, arcEndpoint: 40342, armEndpoint: 8403 };
const imdsEndpoint = `http://127.0.0.1:${ports.imdsEndpoint}/metadata/identity/oauth2/token`;
const armEndpoint = `http://127.0.0.1:${ports.armEndpoint}`;

/** What AKS answers for the pool: the acl harness's join data with a fresh token. */
const poolData = {
  ...aclBaseConfig,
  azure: { ...aclBaseConfig.azure, bootstrapToken: { token: freshToken } },
};

let work: string;
let archive: string;
let sha256: string;
let servicesScript: string;

/** bootstrap.env as docs/usage/getting-started.md writes it for MSI and the fetch. */
function bootstrapEnv(): string {
  return [
    `AKS_FLEX_NODE_AGENT_URL=${quoteEnvValue(`file://${releaseDir}/{{ARCHIVE_NAME}}`)}`,
    `AKS_FLEX_NODE_AGENT_SHA256=${sha256}`,
    'AKS_FLEX_NODE_AUTH=msi',
    `AKS_FLEX_NODE_MSI_CLIENT_ID=${clientId}`,
    'AKS_FLEX_NODE_FETCH_BOOTSTRAP_DATA=true',
    `AKS_FLEX_NODE_CLUSTER_RESOURCE_ID=${cluster}`,
    'AKS_FLEX_NODE_AGENT_POOL_NAME=aksflexnodes',
    // Only because the stand-ins are local: the defaults are Azure's own endpoints.
    `AKS_FLEX_NODE_RESOURCE_MANAGER_ENDPOINT=${armEndpoint}`,
    `AKS_FLEX_NODE_IMDS_ENDPOINT=${imdsEndpoint}`,
    'AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS=true',
    '',
  ].join('\n');
}

const servicesUnitContents = `[Unit]
Description=e2e: local stand-ins for IMDS, Entra ID, Arc and ARM (remote services out of reach)
Before=${unit}

[Service]
Type=exec
ExecStart=${servicesDir}/node ${servicesDir}/azure-services.mjs ${servicesDir}/config.json
# Started only once every server listens.
ExecStartPost=/bin/sh -c 'while [ ! -s ${servicesDir}/endpoints.json ]; do sleep 0.1; done'

[Install]
WantedBy=multi-user.target
`;

/** The stand-ins, laid into the host with the workspace's Node.js 24 to run them. */
function layServices(merged: string): void {
  const dir = path.join(merged, servicesDir);
  mkdirSync(dir, { recursive: true });
  const nodeArch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const node = path.join(repoRoot, `node_modules/node-linux-${nodeArch}/bin/node`);
  copyFileSync(node, path.join(dir, 'node'));
  copyFileSync(servicesScript, path.join(dir, 'azure-services.mjs'));
  const config = {
    tenantId: 'e2e-tenant',
    clients: [],
    imds: { userAssignedClientIds: [clientId], systemAssigned: false },
    arcChallengeDir: '/var/opt/azcmagent/tokens',
    arm: {
      clusterResourceId: cluster,
      agentPoolName: 'aksflexnodes',
      validTokens: '^imds[.]',
      // Only the user-assigned identity holds a role on the cluster.
      authorizedTokens: `^imds[.]${clientId}[.]`,
      response: poolData,
    },
    ports,
    out: `${servicesDir}/endpoints.json`,
  };
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  mkdirSync(path.join(merged, 'var/opt/azcmagent/tokens'), { recursive: true, mode: 0o700 });
  const unitDir = path.join(merged, 'etc/systemd/system');
  writeFileSync(path.join(unitDir, servicesUnit), servicesUnitContents);
  mkdirSync(path.join(unitDir, 'multi-user.target.wants'), { recursive: true });
  symlinkSync(
    `/etc/systemd/system/${servicesUnit}`,
    path.join(unitDir, 'multi-user.target.wants', servicesUnit),
  );
}

describeWithProduct(
  'ignition: first boot with base config {} fetches its join data from AKS',
  () => {
    beforeAll(async () => {
      work = await createReleaseDir();
      archive = await packGoReleaseArchive(work, productBinary);
      sha256 = await sha256File(archive);
      servicesScript = path.join(work, 'azure-services.mjs');
      await build({
        entryPoints: [path.join(repoRoot, 'test/support/azure-services-main.ts')],
        outfile: servicesScript,
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
      const config = await renderFirstBoot({
        script: await readFile(bootstrapScript, 'utf8'),
        env: bootstrapEnv(),
        baseConfig: '{}\n',
      });
      await withHost(
        {
          variant: 'acl',
          name: 'ign-fetch',
          bootTimeoutMs: 300_000,
          provision: (merged) => {
            writeIgnitionToDisk(merged, config);
            mkdirSync(path.join(merged, releaseDir), { recursive: true });
            copyFileSync(archive, path.join(merged, releaseDir, goArchiveName));
            layServices(merged);
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
            freshToken,
            { clientId },
            cluster,
            'aksflexnodes',
            '1.35.6',
          ]);
          const journal = await readJournal(host, unit);
          expect(journal).toContain('fetching fresh bootstrap data from AKS RP');
          expect(journal).toContain('wrote the bootstrap data of agent pool aksflexnodes');
          // Neither the join token nor the ARM token is in any journal line or
          // file outside the config; the stand-ins' own config, which holds the
          // answer they serve, goes first.
          await runOrThrow(host, ['systemctl', 'stop', servicesUnit]);
          await runOrThrow(host, ['rm', '-rf', servicesDir]);
          const everything = await host.run(['journalctl', '--no-pager', '-o', 'cat']);
          expect(everything.stdout).toContain('fetching fresh bootstrap data from AKS RP');
          for (const secret of [freshToken, `imds.${clientId}.`]) {
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
