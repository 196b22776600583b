import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentError } from '@aks-flex-node/log';
import { readAgentConfig } from './config.js';

// Configs shaped as the Go install.sh and bootstrap.sh render them
// (spec/scripts.md 3.6, the cases of 8.3): these are what hosts a Go release
// configured carry, and the daemon must start with every one of them.
const goRendered = {
  'install.sh, MSI with overrides and an offline source': {
    azure: {
      tenantId: 'base-tenant',
      targetCluster: {
        resourceId:
          '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1',
      },
      targetAgentPoolName: 'aksflexnodes',
      resourceManagerEndpoint: 'https://management.azure.com',
      arc: { enabled: false },
      managedIdentity: { clientId: 'cli-msi' },
    },
    bootstrap: {
      ociImage: 'mcr.microsoft.com/aks/flex-node/bootstrap:cli',
      offlineArtifacts: { source: '/var/lib/aks-flex-node/offline-env' },
    },
    components: {},
    networking: {},
    labels: { base: 'true', environment: 'true', cli: 'true' },
    agent: { nodeName: 'node-a1', logDir: '/var/log/aks-flex-node', logLevel: 'info' },
  },
  'bootstrap.sh, Arc with fetched bootstrap data merged over it': {
    azure: {
      targetCluster: {
        resourceId: '/subscriptions/s/resourceGroups/rg/providers/x/managedClusters/c',
      },
      targetAgentPoolName: 'aksflexnodes',
      arc: { enabled: true, resourceGroup: 'arc-rg', location: 'westus2' },
    },
    bootstrap: {},
    kubernetes: { version: '1.35.6' },
    components: { kubernetes: '1.35.6' },
    networking: { dnsServiceIP: '10.0.0.10', podCIDR: '10.244.0.0/16' },
    node: { kubelet: { bootstrapToken: 'abcdef.0123456789abcdef', serverURL: 'https://c1:443' } },
    labels: { fresh: true },
    agent: { nodeName: 'node-a2' },
  },
  'bootstrap.sh, service principal with a secret file and a null tenant': {
    azure: {
      tenantId: null,
      arc: { enabled: false },
      servicePrincipal: {
        tenantId: null,
        clientId: 'cli-client',
        clientSecretFile: '/etc/aks-flex-node/sp-secret',
      },
    },
    agent: { nodeName: 'node-a3', logLevel: 'debug' },
  },
  'bootstrap.sh, service principal with an inline secret': {
    azure: {
      arc: { enabled: false },
      servicePrincipal: {
        tenantId: 'base-tenant',
        clientId: 'inline-client',
        clientSecret: 'inline-secret',
      },
    },
    agent: { nodeName: 'node-a4' },
  },
  'the issue report: agent.logDir and agent.nodeName': {
    agent: { logDir: '/var/log/aks-flex-node', nodeName: 'node-a5' },
  },
  'the default this product writes': { agent: { logLevel: 'info' } },
  'an empty object': {},
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'config-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeConfig(value: unknown): Promise<string> {
  const file = path.join(dir, 'config.json');
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  return file;
}

describe('readAgentConfig', () => {
  it.each(Object.entries(goRendered))('accepts %s and keeps every field', async (_name, value) => {
    const config = await readAgentConfig(await writeConfig(value));
    // Nothing is dropped: every field the Go scripts wrote comes back.
    expect(config).toMatchObject(value);
  });

  it.each([
    ['WARNING', 'warn'],
    ['panic', 'fatal'],
    [' Debug ', 'debug'],
  ])('reads the logrus level %j as %s', async (level, expected) => {
    const config = await readAgentConfig(await writeConfig({ agent: { logLevel: level } }));
    expect(config.agent?.logLevel).toBe(expected);
  });

  it.each([
    ['a log level no logger knows', { agent: { logLevel: 'loud' } }, 'agent.logLevel'],
    ['a node name that is not a string', { agent: { nodeName: 7 } }, 'agent.nodeName'],
    ['Arc enabled as a string', { azure: { arc: { enabled: 'yes' } } }, 'azure.arc.enabled'],
    ['an agent section that is not an object', { agent: 'x' }, 'agent'],
  ])('refuses %s with INVALID_CONFIG naming the field', async (_name, value, field) => {
    const file = await writeConfig(value);
    await expect(readAgentConfig(file)).rejects.toSatisfy(
      (error) =>
        isAgentError(error, 'INVALID_CONFIG') &&
        error.message.includes(file) &&
        error.message.includes(field),
    );
  });

  it('refuses a config that is not JSON, naming the file', async () => {
    const file = path.join(dir, 'config.json');
    await writeFile(file, '{"agent":');
    await expect(readAgentConfig(file)).rejects.toSatisfy(
      (error) => isAgentError(error, 'INVALID_CONFIG') && error.message.includes(file),
    );
  });
});
