/** An access token and when it stops being valid. */
export interface IssuedToken {
  readonly token: string;
  /** Milliseconds since the epoch. */
  readonly expiresOnTimestamp: number;
}

/**
 * The token in a managed identity endpoint's answer (IMDS and Arc share the
 * shape): `access_token` with `expires_on` in epoch seconds (a string on the
 * wire) or `expires_in`. Returns undefined for anything else.
 */
export function parseTokenResponse(body: string, now: number): IssuedToken | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    // Not JSON: the caller reports the endpoint as answering garbage.
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const fields = parsed as Record<string, unknown>;
  const token = fields.access_token;
  if (typeof token !== 'string' || token === '') return undefined;
  const expiresOn = Number(fields.expires_on);
  if (Number.isFinite(expiresOn) && expiresOn > 0) {
    return { token, expiresOnTimestamp: expiresOn * 1000 };
  }
  const expiresIn = Number(fields.expires_in);
  if (Number.isFinite(expiresIn) && expiresIn > 0) {
    return { token, expiresOnTimestamp: now + expiresIn * 1000 };
  }
  return undefined;
}

/** The resource a `.default` scope names, as IMDS and Arc want it. */
export function resourceOfScope(scope: string): string {
  return scope.replace(/\/\.default$/, '');
}
