import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Orders the namespace files so that the crash suites start first. vitest
 * runs the longest files first only when its results cache knows their
 * durations; a fresh clone (every CI run) has no cache, and vitest then runs
 * the larger files first. The crash suites kill a trial at every failpoint
 * and are the longest files by far, but some are the smallest (the move's
 * two passes are a line each), so they started last and made the lane's
 * tail. Started first, the short files fill in beside them.
 */
export class CrashFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isCrashFile = (spec: TestSpecification): boolean =>
      /-crash(-[\w-]+)?\.test\.ts$/.test(spec.moduleId);
    return [...sorted.filter(isCrashFile), ...sorted.filter((spec) => !isCrashFile(spec))];
  }
}
