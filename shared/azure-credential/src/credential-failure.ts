import { AgentError, messageOf, type AgentErrorDetails } from '@aks-flex-node/log';
import { withoutQuery } from './endpoints.js';

/** What a failed token request is reported with. */
export interface FailureContext {
  /** The login method, as {@link authModeName} names it. */
  readonly mode: string;
  /** The token service asked; printed without its query string. */
  readonly endpoint: string;
  /** What the operator should check for this login method. */
  readonly check: string;
  /** Values that must never appear in a message: the secret, the token file's contents. */
  readonly secrets: readonly string[];
}

/**
 * A token service's failure (Entra ID, IMDS, Arc): CREDENTIAL_FAILED, with the
 * HTTP status it answered, or undefined where no answer came (network,
 * timeout). A caller whose exit code says retry-or-not (fetch-bootstrap-data
 * under the first-boot unit) tells a refusal (4xx) from a failure that may
 * pass by this status, not by the message's text.
 */
export class TokenServiceFailure extends AgentError {
  readonly httpStatus: number | undefined;

  constructor(message: string, details: AgentErrorDetails, httpStatus: number | undefined) {
    super('CREDENTIAL_FAILED', message, details);
    this.httpStatus = httpStatus;
  }
}

/**
 * CREDENTIAL_FAILED naming the login method, the endpoint, the HTTP status
 * when there was one, and what to check. The cause's text is cut to its first
 * line (the SDKs append trace ids and timestamps) and any secret in it is
 * replaced, so the message is safe for stderr and the journal.
 */
export function credentialFailure(
  context: FailureContext,
  cause: unknown,
  status?: number,
): TokenServiceFailure {
  const code = status ?? statusOf(cause);
  const detail = redact(readableMessage(messageOf(cause)), context.secrets);
  const where = withoutQuery(context.endpoint);
  const http = code === undefined ? '' : ` (HTTP ${code})`;
  return new TokenServiceFailure(
    `${context.mode}: no token from ${where}${http}: ${detail}`,
    { path: where, hint: context.check, cause: redactedCause(cause, context.secrets) },
    code,
  );
}

/** The HTTP status an Azure SDK or MSAL error carries, on it or on a cause. */
function statusOf(error: unknown): number | undefined {
  for (let at = error, depth = 0; typeof at === 'object' && at !== null && depth < 5; depth += 1) {
    for (const key of ['statusCode', 'status']) {
      const value = (at as Record<string, unknown>)[key];
      if (typeof value === 'number' && value >= 100) return value;
    }
    at = (at as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The part of an SDK message an operator reads: Entra ID's `AADSTS…`
 * description when there is one (MSAL wraps it in "Error(s): … Trace ID: …"),
 * else the first line.
 */
function readableMessage(text: string): string {
  const aadsts = /(AADSTS\d+:.*?)(?: - (?:Timestamp|Correlation ID|Trace ID):|$)/m.exec(text)?.[1];
  return aadsts?.trim() ?? firstLine(text);
}

function firstLine(text: string): string {
  const line = text.split('\n').find((part) => part.trim() !== '') ?? text;
  return line.length > 300 ? `${line.slice(0, 300)}…` : line.trim();
}

/** `text` with every secret replaced by `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out;
}

/**
 * The cause kept on the error, as a plain Error with redacted text only: a
 * caller that logs `err` with its cause chain must not print a request body.
 */
function redactedCause(cause: unknown, secrets: readonly string[]): Error {
  return new Error(redact(messageOf(cause), secrets));
}
