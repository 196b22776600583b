import { defineConfig } from 'vitest/config';

// Benchmarks under real systemd (bench/systemd.sh): the e2e harness boots one
// Debian host in systemd-nspawn and measures hand-overs on it. Figures are
// printed and written as JSON; the only asserts are about correctness.
export const benchSystemdConfig = defineConfig({
  test: {
    include: ['bench/systemd/*.bench.ts'],
    globalSetup: ['test/e2e/harness/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 300_000,
    teardownTimeout: 120_000,
  },
});

export default benchSystemdConfig;
