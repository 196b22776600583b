/** One answer of a local identity endpoint (IMDS, Arc). */
export interface EndpointAnswer {
  readonly status: number;
  readonly body: string;
  readonly wwwAuthenticate: string | undefined;
}

/** How long one request may take; IMDS answers in milliseconds when it answers at all. */
const requestTimeoutMs = 10_000;
/** Waits before the retries of a busy or failing endpoint (429, 5xx, no connection). */
const retryDelaysMs = [200, 800];

/**
 * GETs `url` with the `Metadata: true` header both endpoints require, retrying
 * a busy or unreachable endpoint twice, as the Azure SDKs do for IMDS.
 * Redirects are refused: a token request must not be sent elsewhere.
 * Throws the last network error when no attempt got an answer.
 */
export async function getFromIdentityEndpoint(
  url: string,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<EndpointAnswer> {
  for (let attempt = 0; ; attempt += 1) {
    const delay = retryDelaysMs[attempt];
    try {
      const answer = await getOnce(url, headers, signal);
      if (delay === undefined || !isRetryable(answer.status)) return answer;
    } catch (error) {
      if (delay === undefined || signal?.aborted === true) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

async function getOnce(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<EndpointAnswer> {
  const timeout = AbortSignal.timeout(requestTimeoutMs);
  const response = await fetch(url, {
    headers: { Metadata: 'true', ...headers },
    redirect: 'error',
    signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
  });
  return {
    status: response.status,
    body: await response.text(),
    wwwAuthenticate: response.headers.get('www-authenticate') ?? undefined,
  };
}

function isRetryable(status: number): boolean {
  return status === 429 || status >= 500;
}
