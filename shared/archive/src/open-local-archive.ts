import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { makeIoError } from '@aks-flex-node/fs';
import type { AgentError } from '@aks-flex-node/log';
import { refuseArchive } from './archive-refusal.js';
import type { ArchiveBody } from './write-archive-chunks.js';

const unreadableHint = 'check that the file URL names the release archive on this host';

/**
 * Opens the local archive a file URL names (offline hosts), with the same
 * limit as a download: a regular file, no larger than `maxBytes`, checked on
 * the opened handle so the file read is the file checked. The body closes the
 * handle when its iteration ends. Throws UPGRADE_FAILED (unreadable) or
 * UPGRADE_REFUSED (not a file, too large).
 */
export async function openLocalArchive(url: URL, maxBytes: number): Promise<ArchiveBody> {
  const file = fileURLToPath(url);
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever,
    // before the regular-file check below could refuse it.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw makeIoError('read', file, error, { code: 'FETCH_FAILED', hint: unreadableHint });
  }
  let info: Stats;
  try {
    info = await handle.stat();
  } catch (error) {
    await handle.close();
    throw makeIoError('inspect', file, error, { code: 'FETCH_FAILED', hint: unreadableHint });
  }
  const refusal = refuseUnusableFile(file, info, maxBytes);
  if (refusal !== undefined) {
    await handle.close();
    throw refusal;
  }
  return { chunks: handle.createReadStream(), totalBytes: info.size };
}

function refuseUnusableFile(file: string, info: Stats, maxBytes: number): AgentError | undefined {
  if (!info.isFile()) return refuseArchive(`the local archive ${file} is not a regular file`, file);
  if (info.size <= maxBytes) return undefined;
  return refuseArchive(
    `the local archive ${file} is ${info.size} bytes, over the limit of ${maxBytes} bytes`,
    file,
  );
}
