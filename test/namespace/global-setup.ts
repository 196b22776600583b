import {
  setUpSharedSecondBuilds,
  tearDownSharedSecondBuilds,
} from '../support/shared-second-builds.js';

/** Runs once before any namespace file: each version's second build is shared (second-build.ts). */
export function setup(): void {
  setUpSharedSecondBuilds();
}

/** Runs after every file. */
export function teardown(): void {
  tearDownSharedSecondBuilds();
}
