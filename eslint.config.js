import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'coverage/',
      '.data/',
      'node_modules/',
      'test-results/',
      'artifacts/',
      'docs/api/',
      'bench/node_modules/',
    ],
  },
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
  // Floors that hold (docs/architecture.md): an endpoint folder imports the shared steps and the
  // layers below, never another endpoint folder; the layers below the configuration never import
  // it or the server, and take narrow interfaces instead.
  {
    files: ['src/endpoints/*/**/*.ts'],
    ignores: ['src/endpoints/shared/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!shared/)[\\w-]+/',
              message:
                'An endpoint folder imports endpoints/shared and the layers below, not another endpoint folder.',
            },
          ],
        },
      ],
    },
  },
  {
    files: [
      'src/{rules,net,errors,crypto,events,pages,storage,session,oidc,clients,login,grants,http,observability,usage}/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)(config|endpoints|cli|testing)/|(^|/)server\\.js$',
              message:
                'A lower layer does not import the configuration, the server, the endpoints, the CLI or the kit: take a narrow interface (see docs/architecture.md).',
            },
          ],
        },
      ],
    },
  },
);
