import { AgentError } from '@aks-flex-node/log';

/** What a failed call to an Azure service is about, for its message and hint. */
export interface RemoteCall {
  /** What the call was for, e.g. "list bootstrap data". */
  readonly what: string;
  /** The auth mode the token came from: arc, msi or service-principal. */
  readonly authMode: string;
  /** The URL called; only its origin and path are ever shown. */
  readonly url: URL;
}

/**
 * The URL without its query string or fragment: a signed URL's query can be a
 * credential, and an api-version is in the message already where it matters.
 */
export function endpointOf(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** Whether an HTTP status is worth retrying: throttling, a timeout or a server error. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * The error for an HTTP answer that is not a success: REMOTE_UNAVAILABLE
 * (exit 9, retried by the first-boot unit) for 408, 429 and 5xx;
 * REMOTE_REFUSED (exit 12, permanent) for every other status. The message
 * names the auth mode, the endpoint without its query, the status and the
 * service's own error code; the hint says what to check.
 */
export function httpStatusError(
  call: RemoteCall,
  status: number,
  detail: string | undefined,
  hint: string,
): AgentError {
  const code = isRetryableStatus(status) ? 'REMOTE_UNAVAILABLE' : 'REMOTE_REFUSED';
  const said = detail === undefined ? '' : `: ${detail}`;
  return new AgentError(
    code,
    `${call.what}: POST ${endpointOf(call.url)} (auth ${call.authMode}) answered HTTP ${status}${said}`,
    { path: endpointOf(call.url), hint },
  );
}

/** The error for a call that got no HTTP answer at all (DNS, refused, reset, timeout): retryable. */
export function networkError(call: RemoteCall, cause: unknown): AgentError {
  const reason = describeNetworkCause(cause);
  return new AgentError(
    'REMOTE_UNAVAILABLE',
    `${call.what}: POST ${endpointOf(call.url)} (auth ${call.authMode}) got no answer: ${reason}`,
    {
      path: endpointOf(call.url),
      cause,
      hint: `check that this host reaches ${call.url.origin} (DNS, proxy, firewall); the first-boot unit retries by itself`,
    },
  );
}

// fetch() reports "fetch failed" and keeps the socket's error as its cause.
function describeNetworkCause(cause: unknown): string {
  if (cause instanceof Error && cause.name === 'TimeoutError') return 'timed out';
  const inner = cause instanceof Error ? cause.cause : undefined;
  if (inner instanceof Error) {
    const errno = (inner as NodeJS.ErrnoException).code;
    return errno === undefined ? inner.message : `${errno} (${inner.message})`;
  }
  return cause instanceof Error ? cause.message : String(cause);
}
