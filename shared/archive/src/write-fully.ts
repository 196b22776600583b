import type { FileHandle } from 'node:fs/promises';

/**
 * Writes all of `chunk` at the handle's position. FileHandle.write may write
 * less than asked (a nearly full disk), so it loops until the chunk is down
 * or the OS says why not; the caller names the file in the error.
 */
export async function writeFully(handle: FileHandle, chunk: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < chunk.byteLength) {
    const { bytesWritten } = await handle.write(chunk, offset);
    offset += bytesWritten;
  }
}
