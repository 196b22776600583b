import { fileURLToPath } from 'node:url';
import { AgentError, messageOf } from '@aks-flex-node/log';
import { explainUnfetchableUrl } from './check-remote-url.js';
import { parseSha256 } from './parse-sha256.js';
import { redactUrl } from './redact-url.js';

/** Where an upgrade's release archive is, as a request names it. */
export interface ArchiveSourceInput {
  url: string;
  sha256?: string | undefined;
}

/** An {@link ArchiveSourceInput} checked and normalised by {@link parseArchiveSource}. */
export interface ArchiveSource {
  /** An http, https or file URL; a file URL names a local archive (offline hosts). */
  url: URL;
  /** Lowercase hex; absent when the request gave none. */
  sha256?: string;
  /** The URL without query, fragment or user-info: the only form that may be shown. */
  redactedUrl: string;
}

/**
 * Checks an upgrade source before any I/O (spec agentbinary §3.3, option
 * normalisation): http and https need a host and no user-info or fragment;
 * file URLs need a local absolute path and no query or fragment. Error
 * messages show the URL redacted only. Throws INVALID_ARGUMENT.
 */
export function parseArchiveSource(input: ArchiveSourceInput): ArchiveSource {
  const url = parseUrl(input.url.trim());
  const sha256 = parseSha256(input.sha256);
  const redactedUrl = redactUrl(url);
  return sha256 === undefined ? { url, redactedUrl } : { url, sha256, redactedUrl };
}

function parseUrl(text: string): URL {
  if (text === '') throw invalidUrl('the download URL is empty', text);
  if (hasSpaceOrControl(text)) {
    throw invalidUrl(
      `the download URL ${redactUrl(text)} contains a space or control character`,
      text,
    );
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidUrl(`the download URL ${redactUrl(text)} is not an absolute URL`, text);
  }
  const reason =
    url.protocol === 'file:' ? explainUnusableFileUrl(url) : explainUnfetchableUrl(url);
  if (reason !== undefined) throw invalidUrl(`${reason}: ${redactUrl(url)}`, text);
  return url;
}

/**
 * WHATWG URL parsing silently drops tabs and newlines inside a URL; Go's
 * parser refuses them. Refusing them here keeps "what was asked" and "what
 * is fetched" the same string.
 */
function hasSpaceOrControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit <= 0x20 || unit === 0x7f) return true;
  }
  return false;
}

/** Why a file URL cannot name a local archive, or `undefined` when it can. */
function explainUnusableFileUrl(url: URL): string | undefined {
  if (url.hostname !== '' && url.hostname !== 'localhost') {
    return 'a file URL must name a local path (no host)';
  }
  if (url.search !== '' || url.hash !== '') return 'a file URL takes no query or fragment';
  if (url.pathname.endsWith('/')) return 'a file URL must name an archive, not a directory';
  try {
    fileURLToPath(url);
  } catch (error) {
    return `the file URL is not a usable path (${messageOf(error)})`;
  }
  return undefined;
}

function invalidUrl(message: string, text: string): AgentError {
  return new AgentError('INVALID_ARGUMENT', message, {
    path: redactUrl(text),
    hint: 'give an http(s) URL of the release archive, or a file:/// URL of a local copy',
  });
}
