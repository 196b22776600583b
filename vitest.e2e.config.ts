import { defineConfig } from 'vitest/config';

// Real-systemd scenarios (test/e2e, docs/e2e.md): each boots Debian hosts in
// systemd-nspawn, so they need root and take seconds, not milliseconds.
export const e2eConfig = defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    // Builds the cached rootfs once, before any worker starts, and sweeps
    // machines an interrupted earlier run left behind.
    globalSetup: ['test/e2e/harness/global-setup.ts'],
    pool: 'forks',
    // Two files at a time: the machine has two cores, and each scenario's
    // host is a whole systemd boot.
    maxWorkers: 2,
    fileParallelism: true,
    testTimeout: 300_000,
    hookTimeout: 300_000,
    teardownTimeout: 120_000,
  },
});

export default e2eConfig;
