import { describe, expect, it } from 'vitest';
import { releaseArch, releaseArchiveMember, releaseArchiveName } from './release-archive-member.js';

describe('release archive names', () => {
  it.each([
    ['x64', 'amd64', 'aks-flex-node-linux-amd64'],
    ['arm64', 'arm64', 'aks-flex-node-linux-arm64'],
  ])('agentbinary#24 %s is spelled %s, as the Go releases name it', (arch, spelled, member) => {
    expect(releaseArch(arch)).toBe(spelled);
    expect(releaseArchiveMember(arch)).toBe(member);
    expect(releaseArchiveName(arch)).toBe(`${member}.tar.gz`);
  });

  it('defaults to this process architecture', () => {
    expect(releaseArchiveMember()).toBe(releaseArchiveMember(process.arch));
  });

  it.each(['ia32', 'riscv64', 'amd64'])('%s has no release and is refused', (arch) => {
    expect(() => releaseArchiveMember(arch)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => releaseArchiveMember(arch)).toThrow(
      `no aks-flex-node release is built for the architecture ${arch}`,
    );
  });
});
