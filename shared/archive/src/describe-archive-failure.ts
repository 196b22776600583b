import { makeIoError } from '@aks-flex-node/fs';
import { errnoCode, isAgentError, messageOf, type AgentError } from '@aks-flex-node/log';
import { refuseArchive } from './archive-refusal.js';

/**
 * Turns whatever reading an archive threw into an AgentError naming the
 * archive. Our refusals pass through; zlib's errors (a truncated or corrupt
 * gzip stream) and tar's (bad checksum, an entry cut short) are refusals of
 * the archive; anything else is the file failing to read.
 */
export function describeArchiveFailure(error: unknown, archivePath: string): AgentError {
  if (isAgentError(error)) return error;
  const errno = errnoCode(error);
  if (errno?.startsWith('Z_') === true) {
    return refuseArchive(
      `the archive ${archivePath} is not a valid gzip stream (truncated or corrupt): ${messageOf(error)}`,
      archivePath,
    );
  }
  if (typeof error === 'object' && error !== null && 'tarCode' in error) {
    return refuseArchive(
      `the archive ${archivePath} is not a valid tar archive: ${messageOf(error)}`,
      archivePath,
    );
  }
  return makeIoError('read', archivePath, error, {
    code: 'FETCH_FAILED',
    hint: 'check that the downloaded archive is still there and readable, then retry',
  });
}
