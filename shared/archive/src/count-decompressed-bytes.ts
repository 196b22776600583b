import { Transform, type TransformCallback } from 'node:stream';
import { refuseArchive } from './archive-refusal.js';

/**
 * A pass-through that fails once more than `limit` bytes came out of gunzip.
 * It sits before the tar parser, so a gzip bomb (a few hundred KB that
 * inflate to gigabytes) is stopped by what it produces, whatever the tar
 * headers claim, and bytes after the end-of-archive marker count too.
 */
export function countDecompressedBytes(limit: number, archivePath: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > limit) {
        callback(
          refuseArchive(
            `the archive ${archivePath} decompresses to more than ${limit} bytes; refused as a decompression bomb`,
            archivePath,
          ),
        );
        return;
      }
      callback(null, chunk);
    },
  });
}
