import { describe, expect, it } from 'vitest';
import {
  directoriesAbove,
  distrustOfSource,
  distrustOfStaging,
  hostCandidateTrust,
  type EntryFacts,
} from './candidate-source.js';

const nobody = 65534;
const file = (uid: number, mode: number): EntryFacts => ({
  path: '/x/aks-flex-node',
  kind: 'file',
  uid,
  mode: 0o100000 | mode,
});
const dir = (path: string, uid: number, mode: number): EntryFacts => ({
  path,
  kind: 'directory',
  uid,
  mode: 0o040000 | mode,
});
/** `/root/rel/aks-flex-node`'s directories as a host has them. */
const rootOnly = [dir('/root/rel', 0, 0o700), dir('/root', 0, 0o700), dir('/', 0, 0o755)];
/** `/var/tmp/aks-flex-node`'s. */
const varTmp = [dir('/var/tmp', 0, 0o1777), dir('/var', 0, 0o755), dir('/', 0, 0o755)];

describe('distrustOfSource', () => {
  it.each<[string, EntryFacts, EntryFacts[], string | undefined]>([
    ['issue28 root 0755 in root-only directories is trusted', file(0, 0o755), rootOnly, undefined],
    ['issue28 root 0700 is trusted', file(0, 0o700), rootOnly, undefined],
    [
      'issue28 root 0755 directly in sticky /var/tmp is trusted: no one else can rename or remove it',
      file(0, 0o755),
      varTmp,
      undefined,
    ],
    [
      'issue28 root 0755 in a root 0700 directory under sticky /var/tmp is trusted',
      file(0, 0o755),
      [dir('/var/tmp/rel', 0, 0o700), ...varTmp],
      undefined,
    ],
    [
      'issue28 the reported case: nobody-owned 0777 in /var/tmp',
      file(nobody, 0o777),
      varTmp,
      'is owned by uid 65534, not root (uid 0)',
    ],
    [
      'issue28 a name nobody created first and root copied over keeps its owner',
      file(nobody, 0o644 | 0o111),
      varTmp,
      'is owned by uid 65534, not root (uid 0)',
    ],
    [
      'issue28 root-owned but world-writable',
      file(0, 0o757),
      rootOnly,
      'is writable by others (mode 0757)',
    ],
    [
      'issue28 root-owned but group-writable (also an ACL mask granting write)',
      file(0, 0o775),
      rootOnly,
      'is writable by its group (mode 0775)',
    ],
    [
      'issue28 a symbolic link is not judged as its target',
      { ...file(0, 0o755), kind: 'symlink' },
      rootOnly,
      'is a symlink, not a regular file',
    ],
    [
      'issue28 root 0755 in a nobody-owned directory',
      file(0, 0o755),
      [dir('/srv/drop', nobody, 0o755), dir('/srv', 0, 0o755), dir('/', 0, 0o755)],
      'is in /srv/drop, which is owned by uid 65534, not root (uid 0)',
    ],
    [
      'issue28 root 0755 in a root-owned 0777 directory without a sticky bit',
      file(0, 0o755),
      [dir('/srv/drop', 0, 0o777), dir('/srv', 0, 0o755), dir('/', 0, 0o755)],
      'is in /srv/drop, which is writable by others (mode 0777)',
    ],
    [
      'issue28 root 0755 under a nobody-owned sticky directory',
      file(0, 0o755),
      [dir('/srv/drop', nobody, 0o1777), dir('/srv', 0, 0o755), dir('/', 0, 0o755)],
      'is in /srv/drop, which is owned by uid 65534, not root (uid 0)',
    ],
    [
      'issue28 a root 0755 directory of its own under a group-writable one higher up',
      file(0, 0o755),
      [dir('/opt/rel', 0, 0o755), dir('/opt', 0, 0o775), dir('/', 0, 0o755)],
      'is in /opt, which is writable by its group (mode 0775)',
    ],
    [
      'issue28 a directory that turned into a link after the name was resolved',
      file(0, 0o755),
      [{ ...dir('/root/rel', 0, 0o777), kind: 'symlink' }, dir('/', 0, 0o755)],
      'is in /root/rel, which is a symlink, not a directory',
    ],
  ])('%s', (_name, candidate, directories, expected) => {
    expect(distrustOfSource(candidate, directories, hostCandidateTrust)).toBe(expected);
  });
});

describe('distrustOfStaging', () => {
  it.each<[string, EntryFacts[], string | undefined]>([
    [
      'issue28 /var/lib/aks-flex-node as StateDirectory= creates it is root-only',
      [dir('/var/lib/aks-flex-node', 0, 0o755), dir('/var/lib', 0, 0o755), dir('/', 0, 0o755)],
      undefined,
    ],
    [
      'issue28 a sticky directory is not a staging directory: others can plant names in it',
      [dir('/var/tmp', 0, 0o1777), dir('/var', 0, 0o755), dir('/', 0, 0o755)],
      '/var/tmp is writable by others (mode 1777)',
    ],
    [
      'issue28 a nobody-owned state directory',
      [dir('/var/lib/aks-flex-node', nobody, 0o700), dir('/var/lib', 0, 0o755)],
      '/var/lib/aks-flex-node is owned by uid 65534, not root (uid 0)',
    ],
  ])('%s', (_name, directories, expected) => {
    expect(distrustOfStaging(directories, hostCandidateTrust)).toBe(expected);
  });
});

describe('directoriesAbove', () => {
  it.each<[string, string, string, string[]]>([
    ['every directory up to /', '/var/tmp/a', '/', ['/var/tmp', '/var', '/']],
    ['stops at the top directory, inclusive', '/tmp/s/a/b', '/tmp/s', ['/tmp/s/a', '/tmp/s']],
    ['a top directory not above the file checks up to /', '/a/b', '/c', ['/a', '/']],
    ['a file at the root', '/a', '/', ['/']],
  ])('%s', (_name, path, top, expected) => {
    expect(directoriesAbove(path, top)).toEqual(expected);
  });
});
