import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { releaseKindOf } from './release-kind.js';

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'release-kind-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function binary(name: string, script: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, `#!/bin/sh\n${script}\n`);
  await chmod(file, 0o755);
  return file;
}

describe('issue21#4 whose binary a link names', () => {
  it('a Go release (no `version --json`) is another release', async () => {
    const go = await binary(
      'go',
      '[ "$2" = --json ] && { echo "unknown flag: --json" >&2; exit 1; }; echo "aks-flex-node v0.9.0"',
    );
    expect(await releaseKindOf(go)).toBe('other-release');
  });

  it('a release whose `version --json` announces api-v1 is this product', async () => {
    const ours = await binary(
      'ours',
      `echo '{"version":"1","commit":"c","arch":"x64","node":"n","capabilities":["host-root","api-v1"]}'`,
    );
    expect(await releaseKindOf(ours)).toBe('this-product');
  });

  it('JSON without api-v1, or text, is another release', async () => {
    const other = await binary(
      'other',
      `echo '{"version":"1","commit":"c","arch":"x64","node":"n","capabilities":["host-root"]}'`,
    );
    expect(await releaseKindOf(other)).toBe('other-release');
  });

  it('the running executable is this product without being run; a missing binary changes nothing', async () => {
    const self = await binary('self', 'exit 9');
    expect(await releaseKindOf(self, self)).toBe('this-product');
    expect(await releaseKindOf(path.join(dir, 'missing'))).toBe('this-product');
  });
});
