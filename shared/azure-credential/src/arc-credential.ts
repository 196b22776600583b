import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { AgentError, messageOf } from '@aks-flex-node/log';
import { credentialFailure, type FailureContext } from './credential-failure.js';
import { getFromIdentityEndpoint } from './identity-endpoint-request.js';
import { describeAnswer } from './imds-credential.js';
import { parseTokenResponse, resourceOfScope, type IssuedToken } from './token-response.js';

/** The Arc agent's challenge files are short; anything larger is not one (as MSAL checks). */
const maxChallengeBytes = 4096;

/**
 * A token for `scope` from an Arc machine's local identity endpoint (HIMDS).
 * The first GET is answered 401 with `WWW-Authenticate: Basic realm=<file>`;
 * the file, which only root can read, proves the caller is root on this
 * machine, and its contents go back as `Authorization: Basic <contents>`.
 * Throws CREDENTIAL_FAILED naming the endpoint, the status or the file.
 */
export async function arcToken(
  endpoint: string,
  challengeDir: string,
  scope: string,
  context: FailureContext,
  signal?: AbortSignal,
): Promise<IssuedToken> {
  const url = new URL(endpoint);
  url.searchParams.set('api-version', '2020-06-01');
  url.searchParams.set('resource', resourceOfScope(scope));
  const challenge = await request(url, {}, context, signal);
  if (challenge.status !== 401) {
    throw credentialFailure(context, new Error(unexpectedFirstAnswer(challenge)), challenge.status);
  }
  const keyFile = realmOf(challenge.wwwAuthenticate);
  if (keyFile === undefined) {
    throw credentialFailure(
      context,
      new Error('the 401 names no challenge file (WWW-Authenticate: Basic realm=<file>)'),
      401,
    );
  }
  const secret = await readChallenge(keyFile, challengeDir, context);
  const secretContext = { ...context, secrets: [...context.secrets, secret] };
  const answer = await request(url, { Authorization: `Basic ${secret}` }, secretContext, signal);
  const token = answer.status === 200 ? parseTokenResponse(answer.body, Date.now()) : undefined;
  if (token !== undefined) return token;
  throw credentialFailure(
    secretContext,
    new Error(describeAnswer(answer.status, answer.body)),
    answer.status,
  );
}

async function request(
  url: URL,
  headers: Record<string, string>,
  context: FailureContext,
  signal: AbortSignal | undefined,
): ReturnType<typeof getFromIdentityEndpoint> {
  try {
    return await getFromIdentityEndpoint(url.toString(), headers, signal);
  } catch (error) {
    throw credentialFailure(context, error);
  }
}

function unexpectedFirstAnswer(answer: { status: number; body: string }): string {
  return answer.status === 200
    ? 'the endpoint answered without the challenge this protocol starts with; it is not an Arc agent'
    : describeAnswer(answer.status, answer.body);
}

/** The file a `Basic realm=<file>` challenge names. */
function realmOf(header: string | undefined): string | undefined {
  const match = /^\s*Basic\s+realm="?([^",]+)"?/i.exec(header ?? '');
  return match?.[1]?.trim();
}

/**
 * The challenge file's contents, after checking it is a `.key` file in the
 * Arc agent's token directory, no larger than a challenge: a process that
 * answers on the endpoint's port cannot make root read and send another file.
 */
async function readChallenge(
  file: string,
  challengeDir: string,
  context: FailureContext,
): Promise<string> {
  const refuse = (why: string, cause?: unknown): AgentError =>
    new AgentError('CREDENTIAL_FAILED', `${context.mode}: challenge file ${file} ${why}`, {
      path: file,
      hint: `the Arc agent writes its challenge files in ${challengeDir}; check that himdsd is the process answering ${context.endpoint} (azcmagent show)`,
      ...(cause === undefined ? {} : { cause: new Error(messageOf(cause)) }),
    });
  let resolved: string;
  try {
    resolved = await realpath(file);
  } catch (error) {
    throw refuse('cannot be read', error);
  }
  const dir = await realpath(challengeDir).catch(() => path.resolve(challengeDir));
  if (path.dirname(resolved) !== dir || !resolved.endsWith('.key')) {
    throw refuse(`is not a .key file in ${challengeDir}; refused`);
  }
  const info = await stat(resolved);
  if (!info.isFile() || info.size > maxChallengeBytes) {
    throw refuse(
      `is not a challenge file (over ${maxChallengeBytes} bytes or not a file); refused`,
    );
  }
  return (await readFile(resolved, 'utf8')).trim();
}
