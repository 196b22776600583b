/**
 * The fetch's ARM token against a local IMDS stand-in
 * (test/support/token-services): IMDS is host-provided and out of reach from
 * a test. What is shown is the exit class the first-boot unit acts on: a
 * token service's refusal is permanent, its failure that may pass is retried.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor } from '@aks-flex-node/api';
import { AgentError } from '@aks-flex-node/log';
import {
  startImdsEndpoint,
  type ImdsEndpoint,
} from '../../../../test/support/token-services/imds-endpoint.ts';
import { getArmToken } from './arm-token.js';
import { parseClusterId, type FetchAuth, type FetchOptions } from './fetch-options.js';

let imds: ImdsEndpoint;

beforeAll(async () => {
  imds = await startImdsEndpoint({ userAssignedClientIds: ['mi-user'] });
});

afterAll(async () => {
  await imds.close();
});

function options(auth: FetchAuth): FetchOptions {
  return {
    cluster: parseClusterId(
      '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/cluster',
    ),
    agentPoolName: 'aksflexnodes',
    auth,
    resourceManagerEndpoint: new URL('https://management.azure.com/'),
    authorityHost: new URL('https://login.microsoftonline.com/'),
    apiVersion: '2026-05-02-preview',
    output: '/nonexistent/bootstrap-data.json',
    allowInsecureEndpoints: true,
  };
}

function env(imdsEndpoint = imds.tokenUrl): NodeJS.ProcessEnv {
  return {
    AKS_FLEX_NODE_IMDS_ENDPOINT: imdsEndpoint,
    AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS: 'true',
  };
}

async function failure(run: Promise<string>): Promise<AgentError> {
  const error = await run.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AgentError);
  return error as AgentError;
}

describe('getArmToken: a token service failure under the fetch exit codes', () => {
  it('issue27 a managed identity gets its token from IMDS', async () => {
    const token = await getArmToken(options({ mode: 'msi', clientId: 'mi-user' }), env());
    expect(token).toMatch(/^imds\./);
  });

  it('issue27 IMDS refusing the identity (HTTP 400) is REMOTE_REFUSED: permanent, exit 12', async () => {
    const error = await failure(
      getArmToken(options({ mode: 'msi', clientId: 'not-assigned' }), env()),
    );
    expect(error.code).toBe('REMOTE_REFUSED');
    expect(exitCodeFor(error.code)).toBe(12);
    expect(error.message).toContain(`no token from ${imds.tokenUrl} (HTTP 400)`);
  });

  it('issue27 IMDS failing with 503 is REMOTE_UNAVAILABLE: retried, exit 9', async () => {
    imds.failWith({ status: 503 });
    try {
      const error = await failure(
        getArmToken(options({ mode: 'msi', clientId: undefined }), env()),
      );
      expect(error.code).toBe('REMOTE_UNAVAILABLE');
      expect(exitCodeFor(error.code)).toBe(9);
      expect(error.message).toContain('HTTP 503');
    } finally {
      imds.failWith(undefined);
    }
  });

  it('issue27 no IMDS answering at all is REMOTE_UNAVAILABLE, exit 9', async () => {
    const error = await failure(
      getArmToken(
        options({ mode: 'msi', clientId: undefined }),
        env('http://127.0.0.1:9/metadata/identity/oauth2/token'),
      ),
    );
    expect(error.code).toBe('REMOTE_UNAVAILABLE');
  });
});
