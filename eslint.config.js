// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '**/node_modules/**', '.cache/**'] },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.strictTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports (STYLE.md 5).' },
        { selector: 'ExportAllDeclaration', message: 'Re-export names explicitly (STYLE.md 5).' },
      ],
      // Packages are reached only through their single "." export (STYLE.md conventions 1).
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@aks-flex-node/*/*'], message: 'Import the package root only.' }] },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // Tool configuration files are loaded by their tools through a default
    // export, and so are text assets (`?raw`) declared in shared/raw-imports.d.ts.
    files: ['*.config.ts', 'shared/raw-imports.d.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
