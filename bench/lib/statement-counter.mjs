/**
 * Counts the statements the library sends to its database, for the bench's "statements per
 * request" column. It wraps the drivers the library itself loads (resolved from the library's
 * package, not from this folder's node_modules, which may hold another copy of `pg`):
 *
 * - `pg`: every `Client#query` is one statement and one round trip (node-postgres sends a query
 *   and waits for its answer; it does not pipeline). A query carrying several statements would
 *   still be one round trip.
 * - `better-sqlite3`: every `run`, `get`, `all` or `iterate` of a prepared statement.
 *
 * Counting costs one increment per statement. `install()` is idempotent.
 *
 * With BENCH_RECORD_SQL=1 (`--scale`) it also keeps each distinct statement's text with the values
 * of its first run, for `recordedStatements()` (EXPLAIN in lib/bulk.mjs); a Map lookup per statement.
 */
import { createRequire } from 'node:module';

const KEY = Symbol.for('openid-oauth-bridge.bench.statements');

export async function installStatementCounter() {
  if (globalThis[KEY]) return globalThis[KEY];
  const counts = { postgres: 0, sqlite: 0 };
  const record = process.env.BENCH_RECORD_SQL === '1';
  const recorded = new Map();
  const remember = (engine, text, values) => {
    if (typeof text !== 'string') return;
    const key = `${engine}\u0000${text}`;
    if (!recorded.has(key)) recorded.set(key, { engine, sql: text, values: values ?? [] });
  };
  const require = createRequire(import.meta.resolve('openid-oauth-bridge'));
  try {
    const pg = require('pg');
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function countedQuery(...args) {
      counts.postgres++;
      if (record) {
        const [first, second] = args;
        if (typeof first === 'string') remember('postgres', first, Array.isArray(second) ? second : []);
        else if (first && typeof first === 'object') remember('postgres', first.text, first.values);
      }
      return query.apply(this, args);
    };
  } catch {
    // pg not installed: nothing to count.
  }
  try {
    const Database = require('better-sqlite3');
    const probe = new Database(':memory:');
    const proto = Object.getPrototypeOf(probe.prepare('select 1'));
    probe.close();
    for (const method of ['run', 'get', 'all', 'iterate']) {
      const original = proto[method];
      proto[method] = function countedStatement(...args) {
        counts.sqlite++;
        if (record) remember('sqlite', this.source, args);
        return original.apply(this, args);
      };
    }
  } catch {
    // better-sqlite3 not installed: nothing to count.
  }
  globalThis[KEY] = {
    snapshot: () => ({ ...counts }),
    recorded: () => [...recorded.values()],
    forget: () => recorded.clear(),
  };
  return globalThis[KEY];
}

/** The counter's totals so far, or `null` when none was installed in this process. */
export function statementCounts() {
  return globalThis[KEY]?.snapshot() ?? null;
}

/** The distinct statements run so far with their first values (BENCH_RECORD_SQL=1), or `[]`. */
export function recordedStatements() {
  return globalThis[KEY]?.recorded() ?? [];
}

/** Forgets the statements recorded so far: those of seeding and migrations, before the load. */
export function forgetRecordedStatements() {
  globalThis[KEY]?.forget();
}
