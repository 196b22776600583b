/**
 * A URL as it may appear in an error message, a log line or an API answer:
 * scheme, host, port and path only. The query and fragment go because signed
 * download URLs (SAS tokens) carry their credentials there; user-info goes for
 * the same reason. Text that does not parse as a URL is cut at its first `?`
 * or `#`, so even a malformed value never leaks a query. `undefined` gives ''.
 */
export function redactUrl(url: URL | string | undefined): string {
  if (url === undefined) return '';
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url.trim()) : new URL(url.href);
  } catch {
    return cutAtQuery(String(url));
  }
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}

function cutAtQuery(text: string): string {
  const end = text.search(/[?#]/);
  const kept = end === -1 ? text : text.slice(0, end);
  // Without a parse there is no telling where user-info ends, so drop it whole.
  return kept.replace(/\/\/[^/]*@/, '//').trim();
}

// A URL inside free text: scheme, then everything up to a query, fragment,
// whitespace or closing punctuation.
const urlInText = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@]*@)?([^\s?#)'"]*)([?#][^\s)'"]*)?/gi;

/**
 * `text` with every URL in it redacted as {@link redactUrl} does. Applied to
 * messages that come from fetch or the OS, whose wording this package does
 * not control, before they are put into an error.
 */
export function redactUrlsInText(text: string): string {
  return text.replace(
    urlInText,
    (_match, scheme: string, _userInfo, rest: string) => scheme + rest,
  );
}
