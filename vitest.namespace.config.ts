import { defineConfig } from 'vitest/config';

// Suites that need root and private mount namespaces; they run the built executable.
export default defineConfig({
  test: {
    include: ['test/namespace/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
