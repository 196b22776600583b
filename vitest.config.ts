import { defineConfig } from 'vitest/config';

// Unit tests: beside their code, no root or namespaces needed.
export const unitConfig = defineConfig({
  test: {
    include: [
      'shared/*/src/**/*.test.ts',
      'services/*/src/**/*.test.ts',
      'scripts/**/*.test.ts',
      'test/layers/*.test.ts',
      'test/docs/*.test.ts',
    ],
    pool: 'forks',
    // Every core: vitest's default leaves one idle, and in CI the unit tests
    // run beside the checks and the build (scripts/test-all.sh), which would
    // leave one of two cores to the whole suite once the checks end.
    maxWorkers: '100%',
  },
});

export default unitConfig;
