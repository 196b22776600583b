import { defineConfig } from 'vitest/config';
import { concurrentTrials } from './test/namespace/concurrent-trials.js';
import { CrashFilesFirst } from './test/namespace/crash-files-first.js';

// Suites that need root and private mount namespaces; they run the built executable.
export default defineConfig({
  test: {
    include: ['test/namespace/**/*.test.ts'],
    pool: 'forks',
    // Each version's second build is made once per run (test/namespace/second-build.ts).
    globalSetup: ['test/namespace/global-setup.ts'],
    // Two files at a time, one per core: each file's hosts live in private
    // mount and network namespaces of their own, so files share nothing but
    // the CPU, and the suite is most of CI's run.
    maxWorkers: 2,
    fileParallelism: true,
    // The longest files first, also in a fresh clone (crash-files-first.ts).
    sequence: { sequencer: CrashFilesFirst },
    // Crash trials marked concurrent run this many at a time within a file,
    // as mapConcurrently's lanes do (the figure and its reason live in one place).
    maxConcurrency: concurrentTrials,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
