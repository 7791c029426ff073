/**
 * `npm ci` on the committed lock, as every CI system runs it. `npm ci` refuses a lock that is out
 * of sync with package.json, including one that lacks the entries of optional platform packages
 * (`@rollup/rollup-*`, npm/cli#4828). `--dry-run` makes the same check without installing, in a
 * second, in a directory that holds only package.json and the lock.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'oob-lock-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('package-lock.json', () => {
  it('is accepted by npm ci (dry run, offline)', async () => {
    copyFileSync(join(ROOT, 'package.json'), join(scratch, 'package.json'));
    copyFileSync(join(ROOT, 'package-lock.json'), join(scratch, 'package-lock.json'));
    const result = await run(
      'npm',
      ['ci', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'],
      { cwd: scratch, timeout: 30_000 },
    ).then(
      () => 'ok',
      (err: { stderr?: string }) => err.stderr ?? String(err),
    );
    expect(result).toBe('ok');
  });

  it('keeps an entry for every optional dependency it names (npm/cli#4828)', () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { optionalDependencies?: Record<string, string> }>;
    };
    const missing = Object.entries(lock.packages).flatMap(([path, entry]) =>
      Object.keys(entry.optionalDependencies ?? {})
        .filter((name) => {
          // Node's lookup: the package's own node_modules, then each enclosing one.
          const parts = path.split('node_modules/').filter(Boolean);
          for (let depth = parts.length; depth >= 0; depth--) {
            const prefix = parts
              .slice(0, depth)
              .map((p) => `node_modules/${p.replace(/\/$/, '')}/`)
              .join('');
            if (lock.packages[`${prefix}node_modules/${name}`]) return false;
          }
          return true;
        })
        .map((name) => `${path || '(root)'} -> ${name}`),
    );
    expect(missing).toEqual([]);
  });

  it('is what CI installs from, with npm ci', () => {
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    expect(ci).toMatch(/^step '[^']*' npm ci\b/m);
    expect(ci).not.toMatch(/^step '[^']*' npm install\b/m);
  });
});
