import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { makeIoError } from '@aks-flex-node/fs';
import { refuseArchive } from './archive-refusal.js';
import { throttleProgress, type DownloadProgress } from './throttle-progress.js';
import { writeFully } from './write-fully.js';

/**
 * An archive's bytes on their way in. Iterating `chunks` owns the source:
 * leaving the loop early (a refusal, an error) cancels the response body or
 * closes the file, so every opener hands its body straight to
 * {@link writeArchiveChunks}.
 */
export interface ArchiveBody {
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  /** From Content-Length or the file's size; undefined when unknown. */
  totalBytes?: number | undefined;
}

/** Where {@link writeArchiveChunks} writes, and its limits. */
export interface ArchiveSink {
  handle: FileHandle;
  /** The temp file's path, for error messages. */
  file: string;
  maxBytes: number;
  signal: AbortSignal;
  onProgress: ((progress: DownloadProgress) => void) | undefined;
  /** Called for every chunk that arrives, throttled or not: the stall watchdog's clock. */
  onChunk?: (() => void) | undefined;
  /** The redacted URL, for refusals. */
  redactedUrl: string;
}

/**
 * Streams the body into the temp file, hashing as it goes, and refuses it as
 * soon as it passes the limit, so an endless body costs at most `maxBytes`
 * of disk. Returns the content's SHA-256 and size. Throws UPGRADE_REFUSED
 * (too large) or UPGRADE_FAILED (write).
 */
export async function writeArchiveChunks(
  body: ArchiveBody,
  sink: ArchiveSink,
): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  const progress = throttleProgress(sink.onProgress, body.totalBytes);
  let bytes = 0;
  for await (const chunk of body.chunks) {
    sink.signal.throwIfAborted();
    sink.onChunk?.();
    bytes += chunk.byteLength;
    if (bytes > sink.maxBytes) {
      throw refuseArchive(
        `the archive at ${sink.redactedUrl} is larger than the limit of ${sink.maxBytes} bytes`,
        sink.redactedUrl,
      );
    }
    hash.update(chunk);
    await writeToSink(sink, chunk);
    progress.report(bytes);
  }
  progress.finish(bytes);
  return { sha256: hash.digest('hex'), bytes };
}

async function writeToSink(sink: ArchiveSink, chunk: Uint8Array): Promise<void> {
  try {
    await writeFully(sink.handle, chunk);
  } catch (error) {
    throw makeIoError('write', sink.file, error, {
      code: 'FETCH_FAILED',
      hint: 'free space in the download directory, then retry the upgrade',
    });
  }
}
