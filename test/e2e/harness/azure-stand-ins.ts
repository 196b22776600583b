// Local stand-ins for the Azure services a first boot that fetches its join
// data talks to: a VM's IMDS and AKS's listBootstrapData on Azure Resource
// Manager (with Entra ID and Arc's endpoint beside them). They are remote
// services that cannot be reached from here, and the hosts have a private
// network, so test/support/azure-services-main.ts runs inside the host, as a
// unit started before the first-boot unit, with the workspace's Node.js 24.
// The e2e first boot and `./run sandbox --ignition` lay them out alike.
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { unitNames } from '@aks-flex-node/layout';
import { aclBaseConfig } from '../../../scripts/ignition/acl-base-config.js';
import { repoRoot } from './e2e-paths.js';

/** The target of the fetch, and the identity IMDS gives a token for. */
export const fetchTarget = {
  cluster:
    '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/cluster',
  agentPool: 'aksflexnodes',
  clientId: 'e2e-user-assigned',
  /** The join token AKS answers with. */
  freshToken: 'fresh1.0123456789abcdef',
} as const;

/** Where the stand-ins live in the host, and their unit. */
export const standInsDir = '/var/tmp/azure-services';
export const standInsUnit = 'e2e-azure-services.service';
/** Fixed ports inside the host: bootstrap.env is written before the servers start. */
const ports = { authorityHost: 8401, imdsEndpoint: 8402, arcEndpoint: 40342, armEndpoint: 8403 };

/** The entry esbuild bundles into the one script the host runs. */
export const standInsEntry = path.join(repoRoot, 'test/support/azure-services-main.ts');

/** What AKS answers for the pool: the acl harness's join data with a fresh token. */
const poolData = {
  ...aclBaseConfig,
  azure: { ...aclBaseConfig.azure, bootstrapToken: { token: fetchTarget.freshToken } },
};

/**
 * bootstrap.env's lines for the fetch, as docs/usage/getting-started.md
 * writes them for a user-assigned managed identity, plus the endpoints of
 * the stand-ins (the defaults are Azure's own).
 */
export function fetchBootstrapEnv(): string[] {
  return [
    'AKS_FLEX_NODE_AUTH=msi',
    `AKS_FLEX_NODE_MSI_CLIENT_ID=${fetchTarget.clientId}`,
    'AKS_FLEX_NODE_FETCH_BOOTSTRAP_DATA=true',
    `AKS_FLEX_NODE_CLUSTER_RESOURCE_ID=${fetchTarget.cluster}`,
    `AKS_FLEX_NODE_AGENT_POOL_NAME=${fetchTarget.agentPool}`,
    `AKS_FLEX_NODE_RESOURCE_MANAGER_ENDPOINT=http://127.0.0.1:${ports.armEndpoint}`,
    `AKS_FLEX_NODE_IMDS_ENDPOINT=http://127.0.0.1:${ports.imdsEndpoint}/metadata/identity/oauth2/token`,
    'AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS=true',
  ];
}

const unitContents = `[Unit]
Description=e2e: local stand-ins for IMDS, Entra ID, Arc and ARM (remote services out of reach)
Before=${unitNames.bootstrap}

[Service]
Type=exec
ExecStart=${standInsDir}/node ${standInsDir}/azure-services.mjs ${standInsDir}/config.json
# Started only once every server listens.
ExecStartPost=/bin/sh -c 'while [ ! -s ${standInsDir}/endpoints.json ]; do sleep 0.1; done'

[Install]
WantedBy=multi-user.target
`;

/**
 * Lays the stand-ins into a host's disk before its first boot: Node.js 24,
 * the bundled script (`script`), its config and an enabled unit. Only the
 * user-assigned identity holds a role on the cluster.
 */
export function layAzureStandIns(merged: string, script: string): void {
  const dir = path.join(merged, standInsDir);
  mkdirSync(dir, { recursive: true });
  const nodeArch = process.arch === 'arm64' ? 'arm64' : 'x64';
  copyFileSync(
    path.join(repoRoot, `node_modules/node-linux-${nodeArch}/bin/node`),
    path.join(dir, 'node'),
  );
  copyFileSync(script, path.join(dir, 'azure-services.mjs'));
  const config = {
    tenantId: 'e2e-tenant',
    clients: [],
    imds: { userAssignedClientIds: [fetchTarget.clientId], systemAssigned: false },
    arcChallengeDir: '/var/opt/azcmagent/tokens',
    arm: {
      clusterResourceId: fetchTarget.cluster,
      agentPoolName: fetchTarget.agentPool,
      validTokens: '^imds[.]',
      authorizedTokens: `^imds[.]${fetchTarget.clientId}[.]`,
      response: poolData,
    },
    ports,
    out: `${standInsDir}/endpoints.json`,
  };
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  mkdirSync(path.join(merged, 'var/opt/azcmagent/tokens'), { recursive: true, mode: 0o700 });
  const unitDir = path.join(merged, 'etc/systemd/system');
  writeFileSync(path.join(unitDir, standInsUnit), unitContents);
  mkdirSync(path.join(unitDir, 'multi-user.target.wants'), { recursive: true });
  symlinkSync(
    `/etc/systemd/system/${standInsUnit}`,
    path.join(unitDir, 'multi-user.target.wants', standInsUnit),
  );
}
