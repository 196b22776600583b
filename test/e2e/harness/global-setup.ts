import {
  setUpSharedSecondBuilds,
  tearDownSharedSecondBuilds,
} from '../../support/shared-second-builds.js';
import { ensureRootfs } from './ensure-rootfs.js';
import { describeSelinuxSupport } from './selinux.js';
import { sweepStaleMachines } from './sweep-stale-machines.js';

/**
 * Runs once before any e2e file: clears machines a killed earlier run left,
 * and builds the rootfs here, once, rather than in two workers racing for
 * the cache lock while their tests' clocks run; and makes the directory
 * where each version's second build is shared (buildSecondRelease).
 */
export async function setup(): Promise<void> {
  reportSwept(sweepStaleMachines());
  setUpSharedSecondBuilds();
  const rootfs = await ensureRootfs();
  process.stderr.write(`e2e: rootfs ${rootfs}\ne2e: ${describeSelinuxSupport()}\n`);
}

/** Runs after every file: the workers are gone, so any machine still here was abandoned. */
export function teardown(): void {
  reportSwept(sweepStaleMachines());
  tearDownSharedSecondBuilds();
}

function reportSwept(names: readonly string[]): void {
  if (names.length > 0)
    process.stderr.write(`e2e: removed abandoned machines: ${names.join(', ')}\n`);
}
