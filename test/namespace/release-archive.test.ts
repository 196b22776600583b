import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { releaseArch, writeReleaseArchive } from '../../scripts/release-archive.mjs';
import { secondBuild } from './second-build.js';

// The release archive as the Go releases' install.sh and AgentUpgrade look for
// it: aks-flex-node-linux-<amd64|arm64>.tar.gz holding exactly one member of
// the same name without `.tar.gz`, and no version in the file name.
const build = secondBuild('0.7.0-archive-test');
afterAll(() => {
  if (process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR === undefined) {
    rmSync(build.dir, { recursive: true, force: true });
  }
});

/** `tar -tv` of an archive: one line per entry, with its type and mode. */
function listing(archive: string): string[] {
  return execFileSync('tar', ['-tvzf', archive], { encoding: 'utf8' }).trim().split('\n');
}

describe('the release archive', () => {
  it('the build writes aks-flex-node-linux-<arch>.tar.gz with its one member and its digest', () => {
    const spelled = process.arch === 'arm64' ? 'arm64' : 'amd64';
    const names = readdirSync(build.dir)
      .filter((name) => name.endsWith('.tar.gz'))
      .sort();
    expect(names).toEqual([`aks-flex-node-linux-${spelled}.tar.gz`]);
    const entries = listing(build.archive);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatch(new RegExp(`^-rwxr-xr-x 0/0 .* aks-flex-node-linux-${spelled}$`));
    expect(readFileSync(`${build.archive}.sha256`, 'utf8')).toBe(
      `${build.sha256}  aks-flex-node-linux-${spelled}.tar.gz\n`,
    );
    // The member is the built binary: the version is inside it, not in the name.
    const extracted = mkdtempSync(path.join(os.tmpdir(), 'release-member-'));
    try {
      execFileSync('tar', [
        '-xzf',
        build.archive,
        '-C',
        extracted,
        `aks-flex-node-linux-${spelled}`,
      ]);
      const info = JSON.parse(
        execFileSync(
          path.join(extracted, `aks-flex-node-linux-${spelled}`),
          ['version', '--json'],
          {
            encoding: 'utf8',
          },
        ),
      ) as { version: string; arch: string };
      expect(info).toMatchObject({ version: '0.7.0-archive-test', arch: spelled });
    } finally {
      rmSync(extracted, { recursive: true, force: true });
    }
  });

  it.each([
    ['x64', 'amd64'],
    ['aarch64', 'arm64'],
  ])('packing for %s names the archive and its member %s', (arch, spelled) => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'release-pack-'));
    try {
      const binary = path.join(path.dirname(build.archive), 'unpacked');
      execFileSync('sh', [
        '-c',
        `tar -xzOf "$1" > "$2" && chmod 755 "$2"`,
        'sh',
        build.archive,
        binary,
      ]);
      const archive = writeReleaseArchive({
        binary,
        arch,
        outDir: out,
        workDir: path.join(path.dirname(build.archive), '.work'),
      });
      expect(path.basename(archive)).toBe(`aks-flex-node-linux-${spelled}.tar.gz`);
      expect(readdirSync(out).sort()).toEqual([
        `aks-flex-node-linux-${spelled}.tar.gz`,
        `aks-flex-node-linux-${spelled}.tar.gz.sha256`,
      ]);
      const entries = listing(archive);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatch(new RegExp(` aks-flex-node-linux-${spelled}$`));
      rmSync(binary);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it.each([
    ['x64', 'amd64'],
    ['x86_64', 'amd64'],
    ['arm64', 'arm64'],
    ['aarch64', 'arm64'],
  ])('%s, as Node or uname name it, is spelled %s', (arch, spelled) => {
    expect(releaseArch(arch)).toBe(spelled);
  });

  it('refuses an architecture no release is built for', () => {
    expect(() => releaseArch('riscv64')).toThrow(/riscv64/);
  });
});
