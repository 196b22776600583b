import { Transform, type TransformCallback } from 'node:stream';
import { refuseArchive } from './archive-refusal.js';

/**
 * A pass-through that refuses a decompressed stream starting with the gzip
 * magic bytes. tar's parser sniffs its input and would gunzip such a second
 * layer itself, past the byte count kept in front of it; a release archive
 * is compressed once.
 */
export function refuseNestedGzip(archivePath: string): Transform {
  let head: Buffer | undefined = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      if (head === undefined) {
        callback(null, chunk);
        return;
      }
      // Gather two bytes first: a chunk boundary may fall between them.
      head = Buffer.concat([head, chunk]);
      if (head.length < 2) {
        callback();
        return;
      }
      if (head[0] === 0x1f && head[1] === 0x8b) {
        callback(refuseArchive(`the archive ${archivePath} is compressed twice`, archivePath));
        return;
      }
      const first = head;
      head = undefined;
      callback(null, first);
    },
    flush(callback: TransformCallback) {
      callback(null, head !== undefined && head.length > 0 ? head : undefined);
    },
  });
}
