import { createReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { makeIoError } from '@aks-flex-node/fs';
import type { ReadEntry } from 'tar';
import { refuseArchive } from './archive-refusal.js';
import { checkMemberEntry } from './check-member-entry.js';
import { countDecompressedBytes } from './count-decompressed-bytes.js';
import { describeArchiveFailure } from './describe-archive-failure.js';
import type { ResolvedExtractOptions } from './extract-options.js';
import { refuseNestedGzip } from './refuse-nested-gzip.js';
import { startTarWalk, type TarWalk } from './tar-walk.js';
import { writeFully } from './write-fully.js';

/** The staged file the member's bytes go into. */
export interface MemberSink {
  handle: FileHandle;
  file: string;
}

/**
 * Reads the whole archive (gunzip, count, untar), checks every entry, and
 * streams the one member into `sink`. Resolves only after the end-of-archive
 * marker and every byte before it were read and checked, and after the rest
 * of the gzip stream was drained through the count. Throws UPGRADE_REFUSED
 * for any archive that breaks a rule, UPGRADE_FAILED when it cannot be read.
 */
export async function readExactMember(
  archivePath: string,
  sink: MemberSink,
  rules: ResolvedExtractOptions,
): Promise<void> {
  const found = { member: false };
  const walk = startTarWalk(archivePath, (entry) => {
    checkMemberEntry(entry, rules, archivePath, found.member);
    found.member = true;
    return writeMember(entry, sink, { archivePath, maxBytes: rules.maxExtractedBytes });
  });
  try {
    await pipeline(
      createReadStream(archivePath),
      createGunzip(),
      // Twice the member limit leaves room for tar's headers and padding; a
      // real archive is far below it.
      countDecompressedBytes(2 * rules.maxExtractedBytes, archivePath),
      refuseNestedGzip(archivePath),
      (chunks: AsyncIterable<Buffer>) => feedWalk(chunks, walk),
    );
  } catch (error) {
    throw describeArchiveFailure(error, archivePath);
  }
  if (!found.member) {
    throw refuseArchive(
      `the archive ${archivePath} does not contain expected member ${rules.member}`,
      archivePath,
    );
  }
}

async function feedWalk(chunks: AsyncIterable<Buffer>, walk: TarWalk): Promise<void> {
  for await (const chunk of chunks) await walk.write(chunk);
  await walk.finish();
}

async function writeMember(
  entry: ReadEntry,
  sink: MemberSink,
  limit: { archivePath: string; maxBytes: number },
): Promise<void> {
  let written = 0;
  for await (const chunk of entry as AsyncIterable<Buffer>) {
    written += chunk.length;
    // tar hands over exactly the size checkMemberEntry saw; counting again
    // keeps the limit even if a later tar release stopped doing so.
    if (written > limit.maxBytes) {
      throw refuseArchive(
        `the member ${entry.path} in ${limit.archivePath} is over the limit of ${limit.maxBytes} bytes`,
        limit.archivePath,
      );
    }
    try {
      await writeFully(sink.handle, chunk);
    } catch (error) {
      throw makeIoError('write', sink.file, error, {
        hint: `free space in the directory of ${sink.file}, then retry`,
      });
    }
  }
}
