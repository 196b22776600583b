import { readFile } from 'node:fs/promises';
import { fileSha256, makeIoError, writeFileAtomic } from '@aks-flex-node/fs';
import { isNotFound } from '@aks-flex-node/log';

/**
 * The digests in the record of daemon binaries that ran on a linked host
 * (`/etc/aks-flex-node/host-root-agents`: lowercase hex SHA-256, one a line).
 * A missing record is an empty set: no daemon has recorded itself yet.
 * Throws HOST_ROOT_IO when it cannot be read.
 */
export async function loadRecordedDigests(record: string): Promise<Set<string>> {
  let text: string;
  try {
    text = await readFile(record, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return new Set();
    throw makeIoError('read', record, error);
  }
  return new Set(text.split(/\s+/).filter((field) => field !== ''));
}

/**
 * Adds the digest of `binary` to the record, durably, unless it is there
 * already (then nothing is written). Releases before the host root never
 * record themselves, which is how the move recognises one in current or
 * last-good. Sorted, one a line, mode 0600: either release reads it.
 * Throws HOST_ROOT_IO when the binary or the record cannot be read or written.
 */
export async function recordDigest(record: string, binary: string): Promise<void> {
  await addRecordedDigest(record, await fileSha256(binary));
}

/** {@link recordDigest} for a digest already computed (the move hashes the running binary once). Throws HOST_ROOT_IO. */
export async function addRecordedDigest(record: string, digest: string): Promise<void> {
  const digests = await loadRecordedDigests(record);
  if (digests.has(digest)) return;
  digests.add(digest);
  const content = `${[...digests].sort().join('\n')}\n`;
  await writeFileAtomic(record, content, { mode: 0o600 });
}
