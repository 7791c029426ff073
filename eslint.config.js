import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', '.data/', 'node_modules/', 'test-results/', 'artifacts/', 'docs/api/', 'bench/node_modules/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // The bench is plain JavaScript run by Node (bench/run.mjs and its contenders).
    files: ['bench/**/*.mjs'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'console',
          'process',
          'Buffer',
          'URL',
          'URLSearchParams',
          'setTimeout',
          'clearTimeout',
          'fetch',
          'globalThis',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
);
