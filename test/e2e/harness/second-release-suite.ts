import { rm } from 'node:fs/promises';
import { afterAll, beforeAll } from 'vitest';
import { buildSecondRelease, createReleaseDir, type ReleaseArchive } from './release-archive.js';

/**
 * For a describe block that upgrades to a second build: builds it (or links
 * the run's shared one) before the block's tests and removes its directory
 * after them. Returns the archive's getter, valid inside the tests.
 */
export function useSecondRelease(version: string): () => ReleaseArchive {
  let releaseDir: string | undefined;
  let release: ReleaseArchive | undefined;
  beforeAll(async () => {
    releaseDir = await createReleaseDir();
    release = await buildSecondRelease(version, releaseDir);
  }, 300_000);
  afterAll(async () => {
    if (releaseDir !== undefined) await rm(releaseDir, { recursive: true, force: true });
  });
  return () => {
    if (release === undefined)
      throw new Error(`the second release ${version} was not built: its beforeAll failed`);
    return release;
  };
}
