import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      'testing/index': 'src/testing/index.ts',
      'redis/index': 'src/storage/redis/index.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    splitting: true,
  },
  {
    // The `openid-oauth-bridge` command: ESM only, no types; esbuild keeps its #! line.
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
  },
]);
