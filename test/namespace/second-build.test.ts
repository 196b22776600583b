import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { releaseArchiveName } from '../../scripts/release-archive.mjs';
import { secondBuild } from './second-build.js';

/**
 * secondBuild's reuse through AKS_FLEX_NODE_SECOND_BUILD_DIR: each version has
 * a directory of its own. Both archives here are laid in place beforehand, so
 * nothing is built; a suite that asked for one version used to be handed
 * whatever archive the shared directory held.
 */
describe('secondBuild with AKS_FLEX_NODE_SECOND_BUILD_DIR', () => {
  let reuse = '';
  const before = process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR;

  beforeEach(() => {
    reuse = mkdtempSync('/var/tmp/aks-flex-node-second-build-test-');
    process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR = reuse;
  });
  afterEach(() => {
    if (before === undefined) delete process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR;
    else process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR = before;
    rmSync(reuse, { recursive: true, force: true });
  });

  it('hands each version the archive built for it', () => {
    for (const version of ['0.2.0-test', '0.7.0-archive-test']) {
      mkdirSync(path.join(reuse, version));
      const archive = path.join(reuse, version, releaseArchiveName());
      writeFileSync(archive, `archive of ${version}\n`);
      // build.mjs writes the digest last: its presence says the build finished.
      writeFileSync(`${archive}.sha256`, '');
    }
    const first = secondBuild('0.2.0-test');
    const second = secondBuild('0.7.0-archive-test');
    expect(first.dir).toBe(path.join(reuse, '0.2.0-test'));
    expect(second.archive).toBe(path.join(reuse, '0.7.0-archive-test', releaseArchiveName()));
    expect(first.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(second.sha256).not.toBe(first.sha256);
  });
});
