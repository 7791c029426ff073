import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      'pages/index': 'src/pages/index.ts',
      'openid/index': 'src/openid/index.ts',
      'testing/index': 'src/testing/index.ts',
      'redis/index': 'src/storage/redis/index.ts',
      'storage/index': 'src/storage/index.ts',
      'observability/index': 'src/observability/index.ts',
    },
    format: ['esm', 'cjs'],
    // Declarations carry the public API only: whatever is marked @internal stays out.
    dts: { compilerOptions: { stripInternal: true } },
    // No source maps in the package: they doubled its size, and the built code is not minified,
    // so a stack trace into dist/ reads as it is.
    sourcemap: false,
    clean: true,
    target: 'node20',
    splitting: true,
  },
  {
    // The `openid-oauth-bridge` command: ESM only, no types; esbuild keeps its #! line.
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    sourcemap: false,
    target: 'node20',
  },
]);
