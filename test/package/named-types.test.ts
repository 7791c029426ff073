/**
 * Every type the public API's signatures name can be named by an app (issue 38, item 12): each
 * parameter and return type of an exported function, constructor or public class member that is
 * the library's own is exported from the package's entries. A main entry cut to fewer names once
 * dropped `RequireBearerOptions`, and `const options: RequireBearerOptions = …` stopped compiling
 * (TS2459, "declares 'RequireBearerOptions' locally, but it is not exported").
 *
 * Two checks: the compiler's walk of the signatures (a type no entry exports fails, with where it
 * is used), and an app, test/package/consumer/named-types.ts, that imports each such type by name
 * and is compiled with `tsc --strict` under moduleResolution node16 and bundler, against the sources.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ENTRIES, ROOT, signatureTypes, type Entry } from './signature-types.js';

const CONSUMER = join(ROOT, 'test', 'package', 'consumer');
const types = signatureTypes();

/** The names the consumer imports, by entry. */
function consumerImports(): Map<string, Entry> {
  const file = join(CONSUMER, 'named-types.ts');
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const imported = new Map<string, Entry>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const entry = statement.moduleSpecifier.text;
    if (!(entry in ENTRIES)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) {
        imported.set((element.propertyName ?? element.name).text, entry as Entry);
      }
    }
  }
  return imported;
}

const tsc = (args: string[]) =>
  promisify(execFile)(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', CONSUMER, '--strict', ...args],
    { cwd: ROOT, timeout: 120_000 },
  ).then(
    ({ stdout }) => stdout,
    (err: { stdout?: string; message: string }) => err.stdout || err.message,
  );

describe('the types of the public signatures', () => {
  it('finds the signatures it checks (the walk works)', () => {
    const requireBearer = types.find((t) => t.name === 'RequireBearerOptions');
    expect(requireBearer?.usedBy).toContain('openid-oauth-bridge: requireBearer(options)');
    expect(types.find((t) => t.name === 'IssuedClient')?.usedBy).toContain(
      'openid-oauth-bridge: registerClient()',
    );
    expect(types.length).toBeGreaterThan(40);
  });

  it('every named type a signature takes or returns is exported from an entry', () => {
    const unexported = types
      .filter((t) => t.exportedFrom.length === 0)
      .map((t) => `${t.name}, named by ${t.usedBy.join('; ')}`);
    expect(unexported).toEqual([]);
  });

  it('the consumer app imports each of them, from an entry that exports it', () => {
    const imported = consumerImports();
    const missing = types
      .filter((t) => !t.exportedFrom.includes(imported.get(t.name)!))
      .map((t) => `${t.name} (from ${t.exportedFrom.join(' or ') || 'no entry'})`);
    expect(missing).toEqual([]);
  });

  // Each compiles the library's sources too: some seconds, so the two run side by side.
  it.concurrent(
    'the consumer app compiles with tsc --strict under moduleResolution node16',
    { timeout: 120_000 },
    async () => {
      expect(await tsc(['--module', 'node16', '--moduleResolution', 'node16'])).toBe('');
    },
  );

  it.concurrent(
    'the consumer app compiles with tsc --strict under moduleResolution bundler',
    { timeout: 120_000 },
    async () => {
      expect(await tsc(['--module', 'esnext', '--moduleResolution', 'bundler'])).toBe('');
    },
  );
});
