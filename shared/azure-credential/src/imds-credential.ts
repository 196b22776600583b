import { credentialFailure, type FailureContext } from './credential-failure.js';
import { getFromIdentityEndpoint } from './identity-endpoint-request.js';
import { parseTokenResponse, resourceOfScope, type IssuedToken } from './token-response.js';

/**
 * A token for `scope` from the VM's managed identity through IMDS: one GET
 * with the resource and, for a user-assigned identity, its client id.
 * Throws CREDENTIAL_FAILED naming the endpoint and status.
 */
export async function imdsToken(
  endpoint: string,
  clientId: string | undefined,
  scope: string,
  context: FailureContext,
  signal?: AbortSignal,
): Promise<IssuedToken> {
  const url = new URL(endpoint);
  url.searchParams.set('api-version', '2018-02-01');
  url.searchParams.set('resource', resourceOfScope(scope));
  if (clientId !== undefined) url.searchParams.set('client_id', clientId);
  let answer;
  try {
    answer = await getFromIdentityEndpoint(url.toString(), {}, signal);
  } catch (error) {
    throw credentialFailure(context, error);
  }
  const token = answer.status === 200 ? parseTokenResponse(answer.body, Date.now()) : undefined;
  if (token !== undefined) return token;
  throw credentialFailure(
    context,
    new Error(describeAnswer(answer.status, answer.body)),
    answer.status,
  );
}

/** An endpoint's refusal in a sentence: its `error_description`/`error` when JSON, else a note. */
export function describeAnswer(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const text = parsed.error_description ?? parsed.message ?? parsed.error;
    if (typeof text === 'string' && text !== '') return text;
  } catch {
    // Not JSON: fall through to the generic sentence below.
  }
  return status === 200 ? 'the answer holds no access token' : 'the endpoint refused the request';
}
