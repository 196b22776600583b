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
  },
});

export default unitConfig;
