import { refuseArchive } from './archive-refusal.js';
import { redactUrl } from './redact-url.js';

/**
 * Refuses a response with a content encoding other than identity. The
 * request asks for identity, yet fetch would decode a gzip body anyway, and
 * the size limit and the SHA-256 must apply to the bytes the server sent,
 * not to what they decode to (a small gzip can decode to gigabytes).
 * Throws UPGRADE_REFUSED.
 */
export function refuseContentEncoding(headers: Headers, url: URL): void {
  const encoding = headers.get('content-encoding');
  if (encoding === null) return;
  const codings = encoding
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return;
  throw refuseArchive(
    `the server sent ${redactUrl(url)} with Content-Encoding ${codings.join(', ')}; only identity is accepted`,
    redactUrl(url),
    'serve the archive as it is stored (no Content-Encoding), then retry the upgrade',
  );
}
