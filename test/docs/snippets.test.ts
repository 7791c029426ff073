/**
 * Every TypeScript and JavaScript snippet of README.md and docs/ compiles against the package's
 * sources, so the documentation cannot drift from the code.
 *
 * The scheme, for a fenced block whose language is `ts`, `typescript`, `js` or `javascript`:
 *
 * - **Included from a file**: `<!-- snippet: examples/quick-start.mjs -->` on the line before the
 *   fence. The block must equal that file; the file is type-checked here with the examples'
 *   tsconfig, and run by test/examples.
 * - **Partial**: the block's first line is `// partial`. It is type-checked with placeholder
 *   declarations of what the surrounding app would have (`app`, `server`, `storage`, `options`, ...;
 *   see PLACEHOLDERS below), and not run.
 * - **Whole program**: anything else. It is type-checked on its own, with no placeholder, and run
 *   with tsx: it must exit 0 within 20 seconds.
 *
 * `openid-oauth-bridge` and its subpaths resolve to the sources (examples/tsconfig.json's
 * `paths`). A `js` block that calls `require(` is CommonJS (`.cjs`), any other `js` block is ESM
 * (`.mjs`); JavaScript is type-checked too (`checkJs`).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, codeBlocks, documents, type CodeBlock } from './markdown.js';

const LANGS = new Set(['ts', 'typescript', 'js', 'javascript']);
const DIR = join(ROOT, 'test', 'docs', `.snippets-${process.pid}`);
const EXAMPLES_TSCONFIG = join(ROOT, 'examples', 'tsconfig.json');

const PLACEHOLDERS = `
declare const app: import('express').Express;
declare const server: import('openid-oauth-bridge').AuthorizationServer;
declare const storage: import('openid-oauth-bridge/storage').SqlStorage;
declare const options: import('openid-oauth-bridge').AuthorizationServerOptions;
declare const baseUrl: string;
declare const connectionString: string;
declare const http: import('node:http').Server;
declare const clients: import('openid-oauth-bridge/storage').ClientStore;
declare const users: import('openid-oauth-bridge/storage').UserStore;
declare const grants: import('openid-oauth-bridge/storage').GrantStore;
declare const tokens: import('openid-oauth-bridge/storage').TokenStore;
declare function myStorage(): import('openid-oauth-bridge').Storage;
declare function myEphemeralStore(): import('openid-oauth-bridge/storage').EphemeralStore;
declare const auditLog: { write(event: unknown): void };
declare const metrics: { increment(name: string, tags?: Record<string, string>): void };
declare const mailer: { send(message: { to: string; subject: string; text: string }): Promise<void> };
declare function realmsOf(userId: string): unknown;
declare function statsOf(userId: string): unknown;
declare const providers: import('openid-oauth-bridge').ProviderOptions[];
declare const store: import('express-session').Store;
declare const hostSession: import('express').RequestHandler;
declare const passport: import('passport').PassportStatic;
/** The host's own database: Kysely over the SQL adapter's tables, and its own users. */
declare const db: import('kysely').Kysely<any> & { users: any };
/** The host's signed-in user, as its passport setup defines it. */
declare namespace Express {
  interface User {
    id: string;
    name: string;
  }
}
`;

const blocks = documents()
  .flatMap(codeBlocks)
  .filter((b) => LANGS.has(b.lang));
const included = blocks.filter((b) => b.includes !== undefined);
const partial = blocks.filter((b) => b.includes === undefined && /^\/\/ partial\b/.test(b.code));
const whole = blocks.filter((b) => b.includes === undefined && !partial.includes(b));

const where = (b: CodeBlock) => `${b.document}:${b.line}`;

function fileName(b: CodeBlock): string {
  const base = `${b.document.replaceAll('/', '_')}-${b.line}`;
  if (b.lang === 'ts' || b.lang === 'typescript') return `${base}.ts`;
  return /\brequire\(/.test(b.code) ? `${base}.cjs` : `${base}.mjs`;
}

/** Type-checks files with the examples' compiler options; resolves readable diagnostics. */
function typeCheck(files: string[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    EXAMPLES_TSCONFIG,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  // The declarations the project gives untyped dependencies (passport-openid).
  const types = join(ROOT, 'test', 'types', 'passport-openid.d.ts');
  const program = ts.createProgram([types, ...files], { ...config.options, noEmit: true, rootDir: ROOT });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (!d.file) return message;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    return `${d.file.fileName.replace(`${ROOT}/`, '')}:${line + 1}: ${message}`;
  });
}

mkdirSync(DIR, { recursive: true });
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe('documentation snippets', () => {
  it('finds the snippets (README quick start included from the examples)', () => {
    expect(blocks.length).toBeGreaterThan(10);
    expect(included.map((b) => b.includes)).toEqual(
      expect.arrayContaining(['examples/quick-start.mjs', 'examples/quick-start.cjs']),
    );
  });

  it.each(included.map((b) => [where(b), b] as const))(
    '%s is the file it includes, word for word',
    (_, b) => {
      expect(b.code.trimEnd()).toBe(readFileSync(join(ROOT, b.includes!), 'utf8').trimEnd());
    },
  );

  it('the included example files type-check', () => {
    const files = [...new Set(included.map((b) => join(ROOT, b.includes!)))];
    expect(typeCheck(files)).toEqual([]);
  }, 60_000);

  it('the partial snippets type-check with the placeholders', () => {
    const files = partial.map((b) => {
      const path = join(DIR, fileName(b));
      // A module of its own, so that each snippet's names are its own.
      writeFileSync(path, `${b.code}\nexport {};\n`);
      return path;
    });
    const placeholders = join(DIR, 'placeholders.d.ts');
    writeFileSync(placeholders, PLACEHOLDERS);
    expect(typeCheck([placeholders, ...files])).toEqual([]);
  }, 60_000);

  it('the whole programs type-check on their own', () => {
    const files = whole.map((b) => {
      const path = join(DIR, fileName(b));
      writeFileSync(path, b.code);
      return path;
    });
    expect(typeCheck(files)).toEqual([]);
  }, 60_000);

  it.each(whole.map((b) => [where(b), b] as const))(
    '%s runs and exits 0',
    async (_, b) => {
      const path = join(DIR, fileName(b));
      writeFileSync(path, b.code);
      const run = promisify(execFile);
      await expect(
        run(process.execPath, ['--import', 'tsx', path], {
          cwd: DIR,
          timeout: 20_000,
          env: { ...process.env, TSX_TSCONFIG_PATH: EXAMPLES_TSCONFIG },
        }),
      ).resolves.toBeDefined();
    },
    30_000,
  );
});
