import { open, type FileHandle } from 'node:fs/promises';
import { makeIoError } from '@aks-flex-node/fs';

const chunkBytes = 1 << 20;

/**
 * Whether two files of `size` bytes hold the same bytes, compared chunk by
 * chunk from the end: two builds of the executable share Node's code at the
 * start and differ in the application blob near the end, so a difference is
 * found in the first chunk read instead of after hashing 130 MB. Throws
 * HOST_ROOT_IO when either cannot be read.
 */
export async function sameBytes(a: string, b: string, size: number): Promise<boolean> {
  const first = await openForReading(a);
  try {
    const second = await openForReading(b);
    try {
      const left = Buffer.allocUnsafe(chunkBytes);
      const right = Buffer.allocUnsafe(chunkBytes);
      for (let end = size; end > 0; end -= chunkBytes) {
        const start = Math.max(0, end - chunkBytes);
        const length = end - start;
        const [readLeft, readRight] = await Promise.all([
          readFully(first, left, length, start, a),
          readFully(second, right, length, start, b),
        ]);
        if (readLeft !== length || readRight !== length) return false;
        if (!left.subarray(0, length).equals(right.subarray(0, length))) return false;
      }
      return true;
    } finally {
      await second.close();
    }
  } finally {
    await first.close();
  }
}

async function openForReading(file: string): Promise<FileHandle> {
  try {
    return await open(file, 'r');
  } catch (error) {
    throw makeIoError('read', file, error);
  }
}

/** Reads `length` bytes at `position`, or fewer only at the end of the file (it shrank). */
async function readFully(
  handle: FileHandle,
  buffer: Buffer,
  length: number,
  position: number,
  file: string,
): Promise<number> {
  let done = 0;
  try {
    while (done < length) {
      const { bytesRead } = await handle.read(buffer, done, length - done, position + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
  } catch (error) {
    throw makeIoError('read', file, error);
  }
  return done;
}
