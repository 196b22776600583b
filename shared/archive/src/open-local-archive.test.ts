import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { downloadArchive } from './download-archive.js';
import {
  expectCleanFailure,
  releaseArchive,
  releaseDigest,
  type ExpectedFailure,
} from './download-test-support.js';
import { makeTempDir } from './test-support.js';
import { parseArchiveSource } from './archive-source.js';

/** A directory holding `release.tar.gz` and a subdirectory `dir`. */
async function makeLocalSources(): Promise<string> {
  const dir = await makeTempDir();
  await writeFile(path.join(dir, 'release.tar.gz'), releaseArchive);
  await mkdir(path.join(dir, 'dir'));
  return dir;
}

interface LocalRefusalRow extends ExpectedFailure {
  name: string;
  file: string;
  sha256?: string;
  maxBytes?: number;
}

const refusals: LocalRefusalRow[] = [
  {
    name: 'a missing file fails naming it',
    file: 'missing.tar.gz',
    code: 'FETCH_FAILED',
    words: 'read /',
  },
  {
    name: 'a directory is refused',
    file: 'dir',
    code: 'UPGRADE_REFUSED',
    words: 'is not a regular file',
  },
  {
    name: 'a file over the limit is refused before it is read',
    file: 'release.tar.gz',
    maxBytes: 10,
    code: 'UPGRADE_REFUSED',
    words: 'over the limit of 10 bytes',
  },
  {
    name: 'a wrong digest is refused',
    file: 'release.tar.gz',
    sha256: '0'.repeat(64),
    code: 'UPGRADE_REFUSED',
    words: 'expected 000000000000…',
  },
];

describe('downloadArchive from a file URL', () => {
  it('copies a local archive with the same hashing', async () => {
    const dir = await makeLocalSources();
    const tempDir = await makeTempDir();
    const url = pathToFileURL(path.join(dir, 'release.tar.gz')).href;
    const result = await downloadArchive(parseArchiveSource({ url, sha256: releaseDigest }), {
      tempDir,
    });
    expect(result).toMatchObject({ sha256: releaseDigest, bytes: releaseArchive.length });
    expect((await readFile(result.path)).equals(releaseArchive)).toBe(true);
  });

  it.each(refusals)('$name, and leaves no temp file', async (row) => {
    const dir = await makeLocalSources();
    const tempDir = await makeTempDir();
    const source = parseArchiveSource({
      url: pathToFileURL(path.join(dir, row.file)).href,
      sha256: row.sha256,
    });
    const download = downloadArchive(source, { tempDir, maxBytes: row.maxBytes });
    await expectCleanFailure(download, tempDir, row);
  });
});
