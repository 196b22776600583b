import { describe, expect, it } from 'vitest';
import { releaseArchiveMember } from './release-archive-member.js';

describe('releaseArchiveMember', () => {
  it.each([
    ['x64', 'aks-flex-node-linux-x64'],
    ['arm64', 'aks-flex-node-linux-arm64'],
  ])('agentbinary#24 %s gives the member scripts/build.mjs writes', (arch, member) => {
    expect(releaseArchiveMember(arch)).toBe(member);
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
