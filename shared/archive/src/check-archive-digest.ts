import { timingSafeEqual } from 'node:crypto';
import { refuseArchive } from './archive-refusal.js';

/**
 * Refuses a downloaded archive whose SHA-256 differs from the one the request
 * gave; no digest given means nothing to check (spec agentbinary §3.3). The
 * comparison takes constant time, so its timing tells whoever chose the
 * archive nothing about how close they came. Throws UPGRADE_REFUSED.
 */
export function checkArchiveDigest(
  expected: string | undefined,
  actual: string,
  redactedUrl: string,
): void {
  if (expected === undefined) return;
  const want = Buffer.from(expected, 'hex');
  const got = Buffer.from(actual, 'hex');
  // timingSafeEqual throws on unequal lengths; both are 32 bytes by construction.
  if (want.length === got.length && timingSafeEqual(want, got)) return;
  throw refuseArchive(
    `the archive from ${redactedUrl} has SHA-256 ${actual.slice(0, 12)}…, expected ${expected.slice(0, 12)}…`,
    redactedUrl,
    'check that the digest belongs to this archive: a mismatch means a corrupted or altered download',
  );
}
