import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createGzip, gzipSync } from 'node:zlib';
import { create } from 'tar';
import { describe, expect, it } from 'vitest';
import { makePaxPath, makeTar, makeTarGz, type CorpusEntry } from './archive-corpus.js';
import { extractExactMember } from './extract-exact-member.js';
import { makeTempDir, permissions, snapshotFile } from './test-support.js';

const member = 'aks-flex-node-linux-amd64';
const binary = '#!/bin/sh\necho candidate\n';

/** A slot with a previous binary (mode 0700, so a changed mode shows) and the archive beside it. */
async function makeSlot(archive: Buffer): Promise<{ archivePath: string; target: string }> {
  const tmp = await makeTempDir();
  const archivePath = path.join(tmp, 'release.tar.gz');
  await writeFile(archivePath, archive);
  const slots = path.join(tmp, 'lib');
  await mkdir(slots);
  const target = path.join(slots, 'aks-flex-node-green');
  await writeFile(target, 'previous binary');
  await chmod(target, 0o700);
  return { archivePath, target };
}

/**
 * 64 MB of zeros after a valid archive: about 64 KB of gzip, 32 times the 2 MB
 * the reader allows. Kept well under a real bomb's size only because building
 * it at level 9 costs a second per 200 MB, and the refusal comes at 2 MB either way.
 */
async function makeBomb(): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => out.push(chunk));
  gzip.write(makeTar([{ name: member, body: binary }]));
  const zeros = Buffer.alloc(1 << 20);
  for (let i = 0; i < 64; i++) if (!gzip.write(zeros)) await once(gzip, 'drain');
  gzip.end();
  await once(gzip, 'end');
  return Buffer.concat(out);
}

const good: CorpusEntry = { name: member, body: binary };
const wholeTar = makeTar([{ name: member, body: randomBytes(5000) }]);

/** Each row: an archive that must be refused, and words its error must contain. */
const refusals: [string, () => Buffer | Promise<Buffer>, string][] = [
  [
    'agentbinary#123 a ../x member (path traversal)',
    () => makeTarGz([{ name: '../x', body: binary }]),
    'points outside the archive',
  ],
  [
    'a member under ../ deeper down',
    () => makeTarGz([{ name: 'a/../../x', body: binary }]),
    'points outside the archive',
  ],
  [
    'an absolute member name',
    () => makeTarGz([{ name: `/${member}`, body: binary }]),
    'absolute name',
  ],
  [
    'agentbinary#123 a ./ member name',
    () => makeTarGz([{ name: `./${member}`, body: binary }]),
    'not clean',
  ],
  [
    'a member name with a trailing slash',
    () => makeTarGz([{ name: `${member}/`, body: binary }]),
    'not clean',
  ],
  [
    'a backslash in a name',
    () => makeTarGz([{ name: `..\\${member}`, body: binary }]),
    'backslash',
  ],
  [
    'a member named ..',
    () => makeTarGz([{ name: '..', body: binary }]),
    'archive root or its parent',
  ],
  [
    'a pax header that renames the member to ../x',
    () => makeTarGz([makePaxPath('../x'), good]),
    'points outside the archive',
  ],
  [
    'a GNU long name that renames the member',
    () => makeTarGz([{ name: '././@LongLink', type: 'NextFileHasLongPath', body: 'evil\0' }, good]),
    'unexpected member "evil"',
  ],
  [
    'a symlink member',
    () => makeTarGz([{ name: member, type: 'SymbolicLink', linkpath: '/bin/sh' }]),
    'SymbolicLink entry, not a regular file',
  ],
  [
    'a hardlink member',
    () => makeTarGz([{ name: member, type: 'Link', linkpath: 'other' }]),
    'Link entry, not a regular file',
  ],
  [
    'a directory member',
    () => makeTarGz([{ name: member, type: 'Directory' }]),
    'Directory entry, not a regular file',
  ],
  [
    'a device member',
    () => makeTarGz([{ name: member, type: 'CharacterDevice' }]),
    'CharacterDevice entry',
  ],
  ['a FIFO member', () => makeTarGz([{ name: member, type: 'FIFO' }]), 'FIFO entry'],
  [
    'an entry of a type tar skips (sparse)',
    () => makeTarGz([{ name: member, type: 'SparseFile', body: binary }]),
    'unsupported type',
  ],
  ['agentbinary#123 a duplicate member', () => makeTarGz([good, good]), 'duplicate member'],
  [
    'agentbinary#119 a wrong member name',
    () => makeTarGz([{ name: 'other-agent', body: binary }]),
    'unexpected member "other-agent"',
  ],
  [
    'the arm64 member in an amd64 upgrade',
    () => makeTarGz([{ name: 'aks-flex-node-linux-arm64', body: binary }]),
    'unexpected member',
  ],
  [
    'an extra member after the right one',
    () => makeTarGz([good, { name: 'README', body: 'hi' }]),
    'unexpected member "README"',
  ],
  [
    'an extra member before the right one',
    () => makeTarGz([{ name: 'README', body: 'hi' }, good]),
    'unexpected member "README"',
  ],
  ['an empty member', () => makeTarGz([{ name: member, body: '' }]), 'is empty'],
  [
    'agentbinary#122 a member over the extracted limit',
    () => makeTarGz([{ name: member, body: Buffer.alloc(2 << 20, 1) }]),
    'over the limit of 1048576 bytes',
  ],
  ['a decompression bomb (64 MB of zeros)', makeBomb, 'decompression bomb'],
  [
    'a truncated gzip stream',
    () => makeTarGz([{ name: member, body: randomBytes(5000) }]).subarray(0, 3000),
    'not a valid gzip stream',
  ],
  [
    'a gzip stream missing its last byte',
    () => makeTarGz([good]).subarray(0, -1),
    'not a valid gzip stream',
  ],
  ['a tar cut inside the member', () => gzipSync(wholeTar.subarray(0, 2000)), 'Truncated input'],
  [
    'a tar cut after the member, before the end marker',
    () => makeTarGz([good], { endMarker: false }),
    'end-of-archive marker',
  ],
  [
    'a tar cut inside the end marker',
    () => gzipSync(makeTar([good]).subarray(0, -700)),
    'end-of-archive marker',
  ],
  [
    'a header with a bad checksum',
    () => {
      const tar = makeTar([good]);
      tar.writeUInt8(tar.readUInt8(1) ^ 1, 1);
      return gzipSync(tar);
    },
    'checksum',
  ],
  ['a plain tar, not gzip', () => makeTar([good]), 'not a valid gzip stream'],
  ['a tar.gz compressed twice', () => gzipSync(makeTarGz([good])), 'compressed twice'],
  [
    'an archive of nothing but the end marker',
    () => makeTarGz([]),
    `does not contain expected member ${member}`,
  ],
  ['an empty gzip stream', () => gzipSync(Buffer.alloc(0)), 'not a valid tar archive'],
];

describe('extractExactMember', () => {
  it.each(refusals)('%s is refused and the target is untouched', async (_name, build, words) => {
    const { archivePath, target } = await makeSlot(await build());
    const before = await snapshotFile(target);
    const refusal = extractExactMember(archivePath, {
      member,
      targetPath: target,
      maxExtractedBytes: 1 << 20,
    });
    await expect(refusal).rejects.toMatchObject({
      code: 'UPGRADE_REFUSED',
      path: archivePath,
      message: expect.stringContaining(words) as unknown,
    });
    // The previous binary, its mode, and no staged `.agent-upgrade-*` left beside it.
    expect(await snapshotFile(target)).toEqual(before);
  });

  it('agentbinary#116 installs the member with its exact bytes and mode 0755, twice', async () => {
    const body = randomBytes(3 << 20); // past one gzip chunk and one parser write
    const { archivePath, target } = await makeSlot(makeTarGz([{ name: member, body }]));
    for (let run = 0; run < 2; run++) {
      await extractExactMember(archivePath, { member, targetPath: target });
      expect((await readFile(target)).equals(body)).toBe(true);
      expect(permissions((await stat(target)).mode)).toBe(0o755);
      expect(await readdir(path.dirname(target))).toEqual(['aks-flex-node-green']);
    }
  });

  it('installs from an archive made as scripts/build.mjs makes it (GNU tar)', async () => {
    const tmp = await makeTempDir();
    const stage = path.join(tmp, 'stage');
    await mkdir(stage);
    await writeFile(path.join(stage, member), binary, { mode: 0o755 });
    const archivePath = path.join(tmp, 'release.tar.gz');
    execFileSync('tar', [
      '-C',
      stage,
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '-czf',
      archivePath,
      member,
    ]);
    const target = path.join(tmp, 'new/lib/aks-flex-node-blue');
    await extractExactMember(archivePath, { member, targetPath: target, mode: 0o750 });
    expect(await readFile(target, 'utf8')).toBe(binary);
    expect(permissions((await stat(target)).mode)).toBe(0o750);
    // The slot directory was created for it, 0750 like the layout's.
    expect(permissions((await stat(path.dirname(target))).mode)).toBe(0o750);
  });

  it('installs from an archive made by the tar package (pax headers, portable)', async () => {
    const tmp = await makeTempDir();
    await writeFile(path.join(tmp, member), binary);
    const archivePath = path.join(tmp, 'release.tar.gz');
    await create({ gzip: true, portable: true, cwd: tmp, file: archivePath }, [member]);
    const target = path.join(tmp, 'slot');
    await extractExactMember(archivePath, { member, targetPath: target });
    expect(await readFile(target, 'utf8')).toBe(binary);
  });

  it('a missing archive fails as FETCH_FAILED naming it, and stages nothing', async () => {
    const { archivePath, target } = await makeSlot(Buffer.alloc(0));
    const before = await snapshotFile(target);
    const missing = `${archivePath}.gone`;
    await expect(extractExactMember(missing, { member, targetPath: target })).rejects.toMatchObject(
      {
        code: 'FETCH_FAILED',
        path: missing,
      },
    );
    expect(await snapshotFile(target)).toEqual(before);
  });

  it.each([
    ['a member with a directory part', { member: 'bin/agent' }],
    ['the member .', { member: '.' }],
    ['a blank member', { member: '  ' }],
    ['a relative target', { targetPath: 'slot' }],
    ['a target that is not clean', { targetPath: '/opt/x/../slot' }],
    ['agentbinary#117 a setuid mode', { mode: 0o4755 }],
    ['agentbinary#117 a negative size limit', { maxExtractedBytes: -1 }],
    ['a size limit past 2^52', { maxExtractedBytes: Number.MAX_SAFE_INTEGER }],
  ])('%s is an INVALID_ARGUMENT before any I/O', async (_name, override) => {
    const options = { member, targetPath: '/nonexistent/aks-flex-node-test/slot', ...override };
    await expect(extractExactMember('/nonexistent/archive.tar.gz', options)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});
