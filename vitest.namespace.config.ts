import { defineConfig } from 'vitest/config';

// Suites that need root and private mount namespaces; they run the built executable.
export default defineConfig({
  test: {
    include: ['test/namespace/**/*.test.ts'],
    pool: 'forks',
    // Two files at a time, one per core: each file's hosts live in private
    // mount and network namespaces of their own, so files share nothing but
    // the CPU, and the suite is most of CI's run.
    maxWorkers: 2,
    fileParallelism: true,
    // Crash trials marked concurrent (and mapConcurrently's lanes, which
    // follow the same figure in private-host.ts) run two at a time within a
    // file: a trial is mostly waiting on a stale lockfile or a stability
    // interval, so two overlap well; more starve the daemons' own time bounds
    // on a 2-core machine with the other file running beside them.
    maxConcurrency: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
