import { Parser, type ReadEntry } from 'tar';
import { refuseArchive } from './archive-refusal.js';
import { quoteEntryName } from './check-entry-name.js';

/**
 * Handles one entry: throws to refuse the archive, or returns a promise that
 * settles once it has consumed the entry's bytes.
 */
export type EntryHandler = (entry: ReadEntry) => Promise<void>;

/** The tar parser fed from decompressed chunks, refusing at the first problem. */
export interface TarWalk {
  /** Parses a chunk; resolves when more may come. Rejects with the walk's first failure. */
  write(chunk: Buffer): Promise<void>;
  /** Ends the input; resolves once the end-of-archive marker and every entry were handled. */
  finish(): Promise<void>;
}

/**
 * Starts a tar walk over decompressed bytes. The parser runs strict, so its
 * warnings (bad checksum, an entry cut short) are errors; the walk also
 * demands the end-of-archive marker, since without it a tar cut at an entry
 * boundary would look complete.
 */
export function startTarWalk(archivePath: string, onEntry: EntryHandler): TarWalk {
  return new StrictTarWalk(archivePath, onEntry);
}

class StrictTarWalk implements TarWalk {
  // zstd and brotli off: the parser must not decompress a second layer past
  // the byte count kept in front of it (refuseNestedGzip covers gzip).
  private readonly parser = new Parser({ strict: true, zstd: false, brotli: false });
  private readonly consuming: Promise<void>[] = [];
  private readonly parsed: Promise<void>;
  private settle: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private failure: Error | undefined;
  private sawEndMarker = false;
  private entries = 0;

  constructor(
    private readonly archivePath: string,
    private readonly onEntry: EntryHandler,
  ) {
    this.parsed = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    // write() and finish() observe `parsed`; this keeps a refusal that lands
    // between two writes from being reported as unhandled meanwhile.
    this.parsed.catch(() => undefined);
    this.parser.on('entry', (entry: ReadEntry) => {
      this.handleEntry(entry);
    });
    this.parser.on('ignoredEntry', (entry: ReadEntry) => {
      this.refuseIgnored(entry);
    });
    this.parser.on('eof', () => (this.sawEndMarker = true));
    this.parser.on('error', (error: unknown) => {
      this.handleParserError(error);
    });
    this.parser.on('end', () => {
      this.handleEnd();
    });
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    // Bytes after the end marker are left to the caller to drain, never
    // parsed: the parser would keep every one of them in memory.
    if (this.sawEndMarker) return;
    if (this.parser.write(chunk)) return;
    const drained = new Promise<void>((resolve) => this.parser.once('drain', resolve));
    await Promise.race([drained, this.parsed]);
  }

  async finish(): Promise<void> {
    if (this.failure === undefined) this.parser.end();
    await this.parsed;
    await Promise.all(this.consuming);
    // An entry's consumer can fail after the last byte was parsed (a write, say).
    if (this.failure !== undefined) throw this.failure;
  }

  private fail(error: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = error instanceof Error ? error : new Error(String(error));
    this.settle?.reject(this.failure);
    // Stop parsing; the parser's 'error' for this abort finds the walk failed.
    this.parser.abort(new Error('archive refused'));
  }

  private handleEntry(entry: ReadEntry): void {
    this.entries++;
    try {
      this.consuming.push(
        this.onEntry(entry).catch((error: unknown) => {
          this.fail(error);
        }),
      );
    } catch (error) {
      this.fail(error);
    }
  }

  // tar skips entry types it does not know (sparse files, volume labels);
  // an archive holding one was not made by our build.
  private refuseIgnored(entry: ReadEntry): void {
    const name = quoteEntryName(entry.path);
    const message = `the archive entry ${name} has the unsupported type ${entry.type} (in ${this.archivePath})`;
    this.fail(refuseArchive(message, this.archivePath));
  }

  private handleParserError(error: unknown): void {
    // tar calls an archive of nothing but the end marker unrecognised; it is
    // well formed, and the caller reports the missing member more clearly.
    if (this.sawEndMarker && this.entries === 0) return;
    this.fail(error);
  }

  private handleEnd(): void {
    if (this.sawEndMarker) {
      this.settle?.resolve();
      return;
    }
    const message = `the archive ${this.archivePath} has no tar end-of-archive marker; it is truncated`;
    this.fail(refuseArchive(message, this.archivePath));
  }
}
