import { AgentError } from '@aks-flex-node/log';
import { refuseArchive } from './archive-refusal.js';
import { explainUnfetchableUrl } from './check-remote-url.js';
import { redactUrl } from './redact-url.js';
import { refuseContentEncoding } from './refuse-content-encoding.js';
import type { ArchiveBody } from './write-archive-chunks.js';

/** Go's client stops at the 10th redirect; a longer chain is a loop or a trap. */
export const maxRedirects = 10;

const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/**
 * GETs the archive, following redirects itself (fetch's own follower would
 * take any scheme and user-info): each hop is checked as the source was, at
 * most {@link maxRedirects} of them. Answers the 200 response's body, after
 * refusing a content encoding other than identity and a Content-Length over
 * `maxBytes` before a byte is read.
 * Throws UPGRADE_REFUSED (redirect, encoding, size) or UPGRADE_FAILED (status).
 */
export async function openRemoteArchive(
  url: URL,
  maxBytes: number,
  signal: AbortSignal,
): Promise<ArchiveBody> {
  let current = url;
  for (let followed = 0; ; followed++) {
    const response = await fetch(current, {
      redirect: 'manual',
      signal,
      // The archive's bytes as stored: a transparently decoded body would not
      // match the digest the request gave.
      headers: { 'accept-encoding': 'identity' },
    });
    const location = response.headers.get('location');
    if (!redirectStatuses.has(response.status) || location === null) {
      return acceptResponse(response, current, maxBytes);
    }
    await response.body?.cancel();
    if (followed === maxRedirects) {
      throw refuseArchive(
        `stopped after ${maxRedirects} redirects from ${redactUrl(url)}`,
        redactUrl(url),
      );
    }
    current = followRedirect(location, current);
  }
}

function followRedirect(location: string, from: URL): URL {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw refuseArchive(
      `${redactUrl(from)} redirected to ${redactUrl(location)}, which is not a URL`,
      redactUrl(from),
    );
  }
  const reason = explainUnfetchableUrl(next);
  if (reason !== undefined) {
    throw refuseArchive(
      `refused the redirect from ${redactUrl(from)} to ${redactUrl(next)}: ${reason}`,
      redactUrl(from),
    );
  }
  return next;
}

async function acceptResponse(
  response: Response,
  url: URL,
  maxBytes: number,
): Promise<ArchiveBody> {
  if (response.status !== 200) {
    await response.body?.cancel();
    const status = `${response.status} ${response.statusText}`.trim();
    throw new AgentError('FETCH_FAILED', `download ${redactUrl(url)}: HTTP ${status}`, {
      path: redactUrl(url),
      hint: 'check that the URL names a published release archive and has not expired',
    });
  }
  try {
    refuseContentEncoding(response.headers, url);
  } catch (error) {
    await response.body?.cancel();
    throw error;
  }
  const totalBytes = parseContentLength(response.headers.get('content-length'));
  if (totalBytes !== undefined && totalBytes > maxBytes) {
    await response.body?.cancel();
    throw refuseArchive(
      `the archive at ${redactUrl(url)} is ${totalBytes} bytes, over the limit of ${maxBytes} bytes`,
      redactUrl(url),
    );
  }
  // A 200 without a body is an empty archive, which extraction refuses.
  return { chunks: response.body ?? [], totalBytes };
}

/** A Content-Length we can trust for progress and the early limit, else undefined. */
function parseContentLength(header: string | null): number | undefined {
  if (header === null || !/^\d+$/.test(header.trim())) return undefined;
  // Past 2^53 the number is inexact, but still over any limit, which is all that matters.
  return Number(header.trim());
}
