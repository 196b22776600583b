import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exitCodeFor } from '@aks-flex-node/api';
import { AgentError } from '@aks-flex-node/log';
import {
  startMockArm,
  type MockArm,
  type MockArmConfig,
} from '../../../../test/support/mock-arm-server.js';
import { runFetchBootstrapData, type FetchDeps } from './fetch-bootstrap-data.js';

// ARM is a remote service out of reach here: the local mock speaks its
// listBootstrapData protocol on 127.0.0.1 (test/support/mock-arm-server.ts).
const cluster =
  '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/cluster';
const armToken = 'imds.system.1';
const bootstrapToken = 'fresh1.0123456789abcdef';
const data = {
  azure: { bootstrapToken: { token: bootstrapToken } },
  components: { kubernetes: '1.35.6' },
  networking: { dnsServiceIP: '10.0.0.10' },
};

let work: string;
let arm: MockArm | undefined;
let reported: string[];

beforeEach(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'fetch-bootstrap-'));
  reported = [];
});

afterEach(async () => {
  await arm?.close();
  arm = undefined;
  await rm(work, { recursive: true, force: true });
});

async function serve(config: Partial<MockArmConfig> = {}): Promise<string> {
  arm = await startMockArm({
    clusterResourceId: cluster,
    agentPoolName: 'aksflexnodes',
    validTokens: '^imds[.]',
    response: data,
    ...config,
  });
  return arm.origin;
}

function deps(env: NodeJS.ProcessEnv = {}): FetchDeps {
  return {
    env: { AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS: 'true', ...env },
    getArmToken: () => Promise.resolve(armToken),
    fetch,
    report: (line) => reported.push(line),
  };
}

function args(endpoint: string, ...extra: string[]): string[] {
  return [
    '--cluster-resource-id',
    cluster,
    '--agent-pool-name',
    'aksflexnodes',
    '--auth',
    'msi',
    '--resource-manager-endpoint',
    endpoint,
    '--output',
    path.join(work, 'out', 'bootstrap-data.json'),
    ...extra,
  ];
}

async function failure(run: Promise<number>): Promise<AgentError> {
  const error = await run.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AgentError);
  return error as AgentError;
}

describe('fetch-bootstrap-data', () => {
  it('scripts#7.3 writes the data 0600 from the mock ARM, with the default api-version, and prints no token', async () => {
    const url = await serve();
    expect(await runFetchBootstrapData(args(url), deps())).toBe(0);
    const output = path.join(work, 'out', 'bootstrap-data.json');
    expect(JSON.parse(await readFile(output, 'utf8'))).toEqual(data);
    expect((await stat(output)).mode & 0o777).toBe(0o600);
    expect(arm?.answered).toEqual([200]);
    const [request] = arm?.requests ?? [];
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe(
      `${cluster}/agentPools/aksflexnodes/listBootstrapData?api-version=2026-05-02-preview`,
    );
    expect(request?.headers.authorization).toBe(`Bearer ${armToken}`);
    expect(request?.body).toBe('{}');
    expect(reported.join('\n')).not.toContain(bootstrapToken);
  });

  it('scripts#7.3 --api-version and a trailing slash on the endpoint are honoured', async () => {
    const url = await serve({ apiVersion: '2025-01-01' });
    expect(
      await runFetchBootstrapData(args(`${url}/`, '--api-version', '2025-01-01'), deps()),
    ).toBe(0);
    expect(arm?.requests[0]?.path).toMatch(/[?]api-version=2025-01-01$/);
  });

  it.each([
    [503, 'REMOTE_UNAVAILABLE', 9],
    [500, 'REMOTE_UNAVAILABLE', 9],
    [429, 'REMOTE_UNAVAILABLE', 9],
    [403, 'REMOTE_REFUSED', 12],
    [404, 'REMOTE_REFUSED', 12],
  ] as const)(
    'HTTP %i is %s, exit %i; the error names auth, endpoint without query, status',
    async (status, code, exit) => {
      const url = await serve({ alwaysFail: status });
      const error = await failure(runFetchBootstrapData(args(url), deps()));
      expect(error.code).toBe(code);
      expect(exitCodeFor(error.code)).toBe(exit);
      expect(error.message).toContain(`(auth msi) answered HTTP ${status}`);
      expect(error.message).toContain(`${url}${cluster}/agentPools/aksflexnodes/listBootstrapData`);
      expect(error.message).not.toContain('api-version');
      expect(`${error.message} ${error.hint}`).not.toContain(armToken);
      if (status === 403) {
        expect(error.message).toContain('AuthorizationFailed');
        expect(error.hint).toContain(`grant the VM's managed identity a role on ${cluster}`);
      }
      if (status === 429) expect(error.hint).toContain('retry after 7 s');
    },
  );

  it('a wrong token is refused by ARM with 401: permanent, naming the identity to check', async () => {
    const url = await serve({ validTokens: '^arc[.]' });
    const error = await failure(runFetchBootstrapData(args(url), deps()));
    expect(error.code).toBe('REMOTE_REFUSED');
    expect(error.message).toContain('answered HTTP 401: InvalidAuthenticationToken');
  });

  it('no answer at all (nothing listens) is REMOTE_UNAVAILABLE, exit 9', async () => {
    const url = await serve();
    await arm?.close();
    arm = undefined;
    const error = await failure(runFetchBootstrapData(args(url), deps()));
    expect(error.code).toBe('REMOTE_UNAVAILABLE');
    expect(error.message).toContain('got no answer: ECONNREFUSED');
    expect(error.hint).toContain(`check that this host reaches ${url}`);
  });

  it.each([
    ['no token', { components: {} }, 'holds no azure.bootstrapToken.token'],
    ['a malformed token', { azure: { bootstrapToken: { token: 'abc' } } }, 'not [a-z0-9]{6}'],
    ['not an object', [1], 'is not a JSON object'],
  ])('an answer with %s writes nothing and may be retried', async (_name, response, said) => {
    const url = await serve({ response });
    const error = await failure(runFetchBootstrapData(args(url), deps()));
    expect(error.code).toBe('REMOTE_UNAVAILABLE');
    expect(error.message).toContain(said);
    await expect(stat(path.join(work, 'out', 'bootstrap-data.json'))).rejects.toThrow();
  });

  it.each([
    [
      '--output is missing',
      ['--cluster-resource-id', cluster, '--agent-pool-name', 'p', '--auth', 'msi'],
      '--output is required',
    ],
    [
      'the cluster is not an AKS cluster',
      [
        '--cluster-resource-id',
        '/subscriptions/s/resourceGroups/rg',
        '--agent-pool-name',
        'p',
        '--auth',
        'msi',
        '-o',
        '/x',
      ],
      'is not an AKS managed cluster',
    ],
    [
      'the pool name has a slash',
      ['--cluster-resource-id', cluster, '--agent-pool-name', 'a/b', '--auth', 'msi', '-o', '/x'],
      'may hold only letters',
    ],
    [
      'the auth mode is unknown',
      [
        '--cluster-resource-id',
        cluster,
        '--agent-pool-name',
        'p',
        '--auth',
        'kerberos',
        '-o',
        '/x',
      ],
      'unsupported auth mode: kerberos',
    ],
    [
      'arc is given a client id',
      [
        '--cluster-resource-id',
        cluster,
        '--agent-pool-name',
        'p',
        '--auth',
        'arc',
        '--msi-client-id',
        'c',
        '-o',
        '/x',
      ],
      '--auth arc takes no --msi-client-id',
    ],
    [
      'an SP has two credentials',
      [
        '--cluster-resource-id',
        cluster,
        '--agent-pool-name',
        'p',
        '--auth',
        'sp',
        '--sp-tenant-id',
        't',
        '--sp-client-id',
        'c',
        '--sp-client-secret-file',
        '/a',
        '--sp-client-certificate-file',
        '/b',
        '-o',
        '/x',
      ],
      'exactly one secret',
    ],
    [
      'an SP has no tenant',
      [
        '--cluster-resource-id',
        cluster,
        '--agent-pool-name',
        'p',
        '--auth',
        'sp',
        '--sp-client-id',
        'c',
        '--sp-client-secret-file',
        '/a',
        '-o',
        '/x',
      ],
      'requires --sp-tenant-id and --sp-client-id',
    ],
    [
      'the api-version is malformed',
      [
        '--cluster-resource-id',
        cluster,
        '--agent-pool-name',
        'p',
        '--auth',
        'msi',
        '--api-version',
        'latest',
        '-o',
        '/x',
      ],
      'is not YYYY-MM-DD',
    ],
    [
      'the output is relative',
      [
        '--cluster-resource-id',
        cluster,
        '--agent-pool-name',
        'p',
        '--auth',
        'msi',
        '-o',
        'out.json',
      ],
      'must be an absolute path',
    ],
  ])('scripts#7.3 a usage error (exit 2) when %s', async (_name, argv, said) => {
    const error = await failure(runFetchBootstrapData(argv, deps()));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(exitCodeFor(error.code)).toBe(2);
    expect(error.message).toContain(said);
  });

  it('plain-http endpoints are refused unless AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS is truthy', async () => {
    const url = await serve();
    const strict = { ...deps(), env: {} };
    const error = await failure(runFetchBootstrapData(args(url), strict));
    expect(error.message).toContain('--resource-manager-endpoint');
    expect(error.hint).toContain('AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS=true');
    expect(arm?.requests).toEqual([]);
  });

  it('the inline secret leaves the environment before anything else, and counts as the one credential', async () => {
    const env: NodeJS.ProcessEnv = { AKS_FLEX_NODE_SP_CLIENT_SECRET: 'inline-secret' };
    let seen: unknown;
    const url = await serve();
    const withEnv: FetchDeps = {
      ...deps(env),
      getArmToken: (options, childEnv) => {
        seen = { auth: options.auth, secretInEnv: childEnv.AKS_FLEX_NODE_SP_CLIENT_SECRET };
        return Promise.resolve(armToken);
      },
    };
    withEnv.env.AKS_FLEX_NODE_SP_CLIENT_SECRET = 'inline-secret';
    const spArgs = args(url).map((arg) => (arg === 'msi' ? 'service-principal' : arg));
    expect(
      await runFetchBootstrapData(
        [...spArgs, '--sp-tenant-id', 't', '--sp-client-id', 'c'],
        withEnv,
      ),
    ).toBe(0);
    expect(seen).toEqual({
      auth: {
        mode: 'service-principal',
        tenantId: 't',
        clientId: 'c',
        credential: { kind: 'inline-secret', secret: 'inline-secret' },
      },
      secretInEnv: undefined,
    });
    expect(withEnv.env.AKS_FLEX_NODE_SP_CLIENT_SECRET).toBeUndefined();
  });
});
