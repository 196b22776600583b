import type { ClientSecretCredentialOptions, TokenCredential } from '@azure/identity';
import type { CredentialEndpoints } from './endpoints.js';

/** The Entra ID flows @azure/identity signs in with; the setting's secret material already read. */
export type EntraFlow =
  | { kind: 'secret'; tenantId: string; clientId: string; secret: string }
  | { kind: 'certificate'; tenantId: string; clientId: string; pem: string }
  | { kind: 'workload'; tenantId: string; clientId: string; tokenFile: string };

/** The last answer from Entra ID that was not a success: MSAL's errors often lose the status. */
export interface FailedAnswer {
  readonly url: string;
  readonly status: number;
}

/** An @azure/identity credential and the last failed answer its requests got. */
export interface EntraCredential {
  readonly credential: TokenCredential;
  lastFailedAnswer(): FailedAnswer | undefined;
}

/**
 * The @azure/identity credential of a flow, against `endpoints.authorityHost`.
 * @azure/identity is imported here, on first use: the `token` command answers
 * from its cache without loading it (bench/ `token` row).
 */
export async function createEntraCredential(
  flow: EntraFlow,
  endpoints: CredentialEndpoints,
): Promise<EntraCredential> {
  // Named imports in a module of their own, loaded here: the bundle then
  // holds only these credentials, not @azure/identity's interactive ones.
  const identity = await import('./entra-sdk.js');
  let failed: FailedAnswer | undefined;
  const options = entraOptions(endpoints, (answer) => {
    failed = answer;
  });
  return { credential: sdkCredential(identity, flow, options), lastFailedAnswer: () => failed };
}

function sdkCredential(
  identity: typeof import('./entra-sdk.js'),
  flow: EntraFlow,
  options: ClientSecretCredentialOptions,
): TokenCredential {
  switch (flow.kind) {
    case 'secret':
      return new identity.ClientSecretCredential(
        flow.tenantId,
        flow.clientId,
        flow.secret,
        options,
      );
    case 'certificate':
      return new identity.ClientCertificateCredential(
        flow.tenantId,
        flow.clientId,
        { certificate: flow.pem },
        options,
      );
    case 'workload':
      return new identity.WorkloadIdentityCredential({
        ...options,
        tenantId: flow.tenantId,
        clientId: flow.clientId,
        tokenFilePath: flow.tokenFile,
      });
    default: {
      const unhandled: never = flow;
      throw new Error(`unknown Entra flow ${JSON.stringify(unhandled)}`);
    }
  }
}

function entraOptions(
  endpoints: CredentialEndpoints,
  onFailedAnswer: (answer: FailedAnswer) => void,
): ClientSecretCredentialOptions {
  const authority = new URL(endpoints.authorityHost);
  const insecure = authority.protocol === 'http:';
  // MSAL accepts only an https authority; a plain-http test authority (allowed
  // by endpointsFromEnv only with the insecure switch) is named as https and
  // each request is sent over http by the policy below.
  const named = insecure ? `https://${authority.host}` : authority.origin;
  return {
    authorityHost: named,
    // Instance discovery asks login.microsoftonline.com about the authority,
    // whatever host is configured: a sovereign cloud, an air-gapped node or a
    // test authority would each reach out to the public cloud. The node names
    // its authority, so MSAL is told to trust it.
    disableInstanceDiscovery: true,
    // The kubelet retries a failed exec credential itself; long SDK backoffs
    // would only hold its call (defaults reach 64 s).
    retryOptions: { maxRetries: 2, retryDelayInMs: 200, maxRetryDelayInMs: 1000 },
    additionalPolicies: [
      ...(insecure ? [plainHttpPolicy(authority.host)] : []),
      failedAnswerPolicy(onFailedAnswer),
    ],
  };
}

type AdditionalPolicy = NonNullable<ClientSecretCredentialOptions['additionalPolicies']>[number];

/**
 * Sends every request to the test authority's host over plain http, whether
 * MSAL built its URL from the https name or from the http endpoints the
 * authority's metadata lists.
 */
function plainHttpPolicy(host: string): AdditionalPolicy {
  return {
    position: 'perRetry',
    policy: {
      name: 'aks-flex-node-insecure-test-authority',
      sendRequest: (request, next) => {
        const url = new URL(request.url);
        if (url.host === host) {
          url.protocol = 'http:';
          request.url = url.toString();
          request.allowInsecureConnection = true;
        }
        return next(request);
      },
    },
  };
}

/**
 * Records each answer that is not a success. MSAL reports a metadata request
 * that failed as "endpoints_resolution_error", without the URL or status the
 * operator needs.
 */
function failedAnswerPolicy(record: (answer: FailedAnswer) => void): AdditionalPolicy {
  return {
    position: 'perRetry',
    policy: {
      name: 'aks-flex-node-failed-answer',
      sendRequest: async (request, next) => {
        const response = await next(request);
        if (response.status >= 400) record({ url: request.url, status: response.status });
        return response;
      },
    },
  };
}
