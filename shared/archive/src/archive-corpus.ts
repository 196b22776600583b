import { gzipSync } from 'node:zlib';
import { Header, type HeaderData } from 'tar';

/** One entry of a hand-made tar: a name, a type, a body, and header fields to force. */
export interface CorpusEntry {
  name: string;
  type?: HeaderData['type'];
  body?: Buffer | string;
  /** The size the header claims; defaults to the body's length. */
  size?: number;
  linkpath?: string;
}

/** Options for {@link makeTar}. */
export interface MakeTarOptions {
  /** Append the two zero blocks that end an archive; default true. */
  endMarker?: boolean;
}

const block = 512;

/**
 * A tar built header by header with tar's own Header encoder, so a test can
 * write what no well-behaved writer would: traversal names, links, devices,
 * duplicates, a size the body does not have.
 */
export function makeTar(entries: CorpusEntry[], options: MakeTarOptions = {}): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? '');
    const header = new Header({
      path: entry.name,
      type: entry.type ?? 'File',
      size: entry.size ?? body.length,
      mode: 0o755,
      uid: 0,
      gid: 0,
      mtime: new Date(0),
      ...(entry.linkpath === undefined ? {} : { linkpath: entry.linkpath }),
    });
    const encoded = Buffer.alloc(block);
    header.encode(encoded);
    parts.push(encoded, body, Buffer.alloc(padding(body.length)));
  }
  if (options.endMarker ?? true) parts.push(Buffer.alloc(2 * block));
  return Buffer.concat(parts);
}

/** A pax extended header record block that sets `path` for the next entry. */
export function makePaxPath(pathValue: string): CorpusEntry {
  const record = (length: number): string => `${length} path=${pathValue}\n`;
  let length = record(0).length;
  while (record(length).length !== length) length = record(length).length;
  return { name: 'PaxHeader/member', type: 'ExtendedHeader', body: record(length) };
}

/** `gzip(makeTar(entries))`. */
export function makeTarGz(entries: CorpusEntry[], options: MakeTarOptions = {}): Buffer {
  return gzipSync(makeTar(entries, options));
}

function padding(length: number): number {
  return (block - (length % block)) % block;
}
