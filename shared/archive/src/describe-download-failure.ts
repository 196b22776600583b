import { AgentError, isAgentError, messageOf } from '@aks-flex-node/log';
import { redactUrlsInText } from './redact-url.js';

/** What {@link describeDownloadFailure} needs to tell a timeout from a cancel. */
export interface DownloadFailureContext {
  redactedUrl: string;
  timeout: AbortSignal;
  timeoutMs: number;
  /** Aborted when the download received nothing for `stallTimeoutMs`. */
  stall: AbortSignal;
  stallTimeoutMs: number;
  signal: AbortSignal | undefined;
}

/**
 * Turns whatever a download threw into an AgentError whose message shows the
 * URL redacted only. Our own errors pass through. fetch's errors carry their
 * reason as `cause` (a socket or DNS error); its text goes through the URL
 * redactor, because the wording of errors we do not write is not ours to
 * trust with a query string.
 */
export function describeDownloadFailure(
  error: unknown,
  context: DownloadFailureContext,
): AgentError {
  if (isAgentError(error)) return error;
  const { redactedUrl } = context;
  const details = {
    path: redactedUrl,
    hint: 'check the host can reach the URL, then retry the upgrade',
  };
  if (context.signal?.aborted === true) {
    return new AgentError('OPERATION_CANCELLED', `download ${redactedUrl} was cancelled`, details);
  }
  if (context.stall.aborted) {
    return new AgentError(
      'FETCH_FAILED',
      `download ${redactedUrl} stalled: no bytes arrived for ${context.stallTimeoutMs} ms`,
      details,
    );
  }
  if (context.timeout.aborted) {
    return new AgentError(
      'FETCH_FAILED',
      `download ${redactedUrl} timed out after ${context.timeoutMs} ms`,
      details,
    );
  }
  const reason = error instanceof Error && error.cause !== undefined ? error.cause : error;
  const text = reason === error ? messageOf(error) : `${messageOf(error)}: ${messageOf(reason)}`;
  return new AgentError('FETCH_FAILED', `download ${redactedUrl}: ${redactUrlsInText(text)}`, {
    ...details,
    cause: reason,
  });
}
