import { AgentError } from '@aks-flex-node/log';
import { parseCommandArgs } from '../args.js';
import {
  checkAgentPoolName,
  checkApiVersion,
  defaultAuthorityHost,
  defaultBootstrapDataApiVersion,
  defaultResourceManagerEndpoint,
  isTruthy,
  parseClusterId,
  parseEndpoint,
  type FetchAuth,
  type FetchOptions,
  type ServicePrincipalCredential,
} from './fetch-options.js';

/** The environment variable of the inline secret; never a flag, since arguments are visible to every user. */
export const inlineSecretVariable = 'AKS_FLEX_NODE_SP_CLIENT_SECRET';
/** Lets plain-http endpoints through, as the Go agent does for its tests. */
export const allowInsecureVariable = 'AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS';

const flagSpec = {
  'cluster-resource-id': { type: 'string' },
  'agent-pool-name': { type: 'string' },
  auth: { type: 'string' },
  'msi-client-id': { type: 'string' },
  'sp-tenant-id': { type: 'string' },
  'sp-client-id': { type: 'string' },
  'sp-client-secret-file': { type: 'string' },
  'sp-client-certificate-file': { type: 'string' },
  'sp-client-credential-file': { type: 'string' },
  'resource-manager-endpoint': { type: 'string', default: defaultResourceManagerEndpoint },
  'authority-host': { type: 'string', default: defaultAuthorityHost },
  'api-version': { type: 'string', default: defaultBootstrapDataApiVersion },
  output: { type: 'string', short: 'o' },
} as const;

type Flags = ReturnType<typeof parseCommandArgs<typeof flagSpec>>;

/**
 * Takes the inline secret out of the environment before anything else runs,
 * so no child process and no error report can see it. Returns it, or
 * undefined when unset or empty.
 */
export function takeInlineSecret(env: NodeJS.ProcessEnv): string | undefined {
  const secret = env[inlineSecretVariable];
  // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- the one variable holding a secret
  delete env[inlineSecretVariable];
  return secret === undefined || secret === '' ? undefined : secret;
}

/**
 * Parses and checks `fetch-bootstrap-data`'s flags (spec/scripts.md 7.3):
 * --cluster-resource-id, --agent-pool-name, --auth and --output are
 * required. Throws INVALID_ARGUMENT naming the flag and what to give.
 */
export function parseFetchFlags(
  args: string[],
  env: NodeJS.ProcessEnv,
  inlineSecret: string | undefined,
): FetchOptions {
  const flags = parseCommandArgs('fetch-bootstrap-data', args, flagSpec);
  const allowInsecureEndpoints = isTruthy(env[allowInsecureVariable]);
  return {
    cluster: parseClusterId(required(flags, 'cluster-resource-id')),
    agentPoolName: checkAgentPoolName(required(flags, 'agent-pool-name')),
    auth: parseAuth(flags, inlineSecret),
    resourceManagerEndpoint: parseEndpoint(
      '--resource-manager-endpoint',
      flags['resource-manager-endpoint'],
      allowInsecureEndpoints,
    ),
    authorityHost: parseEndpoint(
      '--authority-host',
      flags['authority-host'],
      allowInsecureEndpoints,
    ),
    apiVersion: checkApiVersion(flags['api-version']),
    output: checkOutput(required(flags, 'output')),
    allowInsecureEndpoints,
  };
}

type RequiredFlag = 'cluster-resource-id' | 'agent-pool-name' | 'auth' | 'output';

function required(flags: Flags, name: RequiredFlag): string {
  const value = flags[name];
  if (value === undefined || value === '') {
    throw new AgentError('INVALID_ARGUMENT', `fetch-bootstrap-data: --${name} is required`, {
      hint: 'run `aks-flex-node fetch-bootstrap-data --help` for the flags',
    });
  }
  return value;
}

function checkOutput(output: string): string {
  if (!output.startsWith('/')) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `fetch-bootstrap-data: --output ${output} must be an absolute path`,
      { path: output, hint: 'give the absolute path of the file to write (0600)' },
    );
  }
  return output;
}

function parseAuth(flags: Flags, inlineSecret: string | undefined): FetchAuth {
  const mode = required(flags, 'auth').trim().toLowerCase();
  switch (mode) {
    case 'arc':
      if (flags['msi-client-id'] !== undefined && flags['msi-client-id'] !== '') {
        throw new AgentError(
          'INVALID_ARGUMENT',
          'fetch-bootstrap-data: --auth arc takes no --msi-client-id: the Arc agent has one identity',
          { hint: 'leave out --msi-client-id, or use --auth msi on an Azure VM' },
        );
      }
      return { mode: 'arc' };
    case 'msi':
    case 'managed-identity':
      return { mode: 'msi', clientId: nonEmpty(flags['msi-client-id']) };
    case 'sp':
    case 'service-principal':
      return parseServicePrincipal(flags, inlineSecret);
    default:
      throw new AgentError(
        'INVALID_ARGUMENT',
        `fetch-bootstrap-data: unsupported auth mode: ${mode} (expected arc, msi, or service-principal)`,
        { path: mode, hint: 'give --auth arc, --auth msi or --auth service-principal' },
      );
  }
}

function parseServicePrincipal(flags: Flags, inlineSecret: string | undefined): FetchAuth {
  const tenantId = nonEmpty(flags['sp-tenant-id']);
  const clientId = nonEmpty(flags['sp-client-id']);
  if (tenantId === undefined || clientId === undefined) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      'fetch-bootstrap-data: --auth service-principal requires --sp-tenant-id and --sp-client-id',
      { hint: 'give the tenant and the application (client) ID of the service principal' },
    );
  }
  const candidates: ServicePrincipalCredential[] = [];
  const add = (kind: 'secret-file' | 'certificate-file' | 'credential-file', path?: string) => {
    if (path !== undefined && path !== '') candidates.push({ kind, path });
  };
  if (inlineSecret !== undefined) candidates.push({ kind: 'inline-secret', secret: inlineSecret });
  add('secret-file', flags['sp-client-secret-file']);
  add('certificate-file', flags['sp-client-certificate-file']);
  add('credential-file', flags['sp-client-credential-file']);
  const [credential] = candidates;
  if (credential === undefined || candidates.length > 1) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `fetch-bootstrap-data: service-principal auth requires exactly one secret, secret file, certificate file or credential file (${candidates.length} given)`,
      {
        hint: `give one of --sp-client-secret-file, --sp-client-certificate-file, --sp-client-credential-file or ${inlineSecretVariable}`,
      },
    );
  }
  return { mode: 'service-principal', tenantId, clientId, credential };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
