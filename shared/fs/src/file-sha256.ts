import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { makeIoError } from './io-error.js';

/**
 * The lowercase hex SHA-256 of a file's content, read as a stream so a
 * 100 MB binary is never held in memory. A missing file keeps ENOENT as the
 * error's cause.
 */
export async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  try {
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  } catch (error) {
    throw makeIoError('read', file, error);
  }
  return hash.digest('hex');
}
