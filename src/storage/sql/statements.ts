import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** How many distinct SQL texts keep a prepared statement; the adapter's queries number a few dozen. */
const DEFAULT_CAPACITY = 200;

/**
 * A `better-sqlite3` database as Kysely's SqliteDialect sees it, whose `prepare(sql)` returns the
 * statement prepared the last time for the same SQL text. Kysely's SqliteDriver prepares on every
 * query; compiling SQL in SQLite costs several times what running an indexed lookup does.
 *
 * Reusing a statement is safe: Kysely (and the direct path, see sqlite-direct.ts) only calls
 * `reader`, `all`, `run` and `iterate` on it, and `better-sqlite3` runs `all` and `run`
 * synchronously to completion, binding the parameters anew each time, so no two callers can hold
 * one statement at once, inside a transaction or not. The one exception is an `iterate()` left
 * open (Kysely's `stream()`): while it is, the statement is `busy`, and a caller wanting the same
 * SQL text gets a fresh statement instead of the cached one.
 * A statement outlives schema changes (SQLite recompiles it), and on a closed database it throws
 * the same "The database connection is not open" that `prepare` would.
 *
 * The cache is bounded (least recently used out first) so queries built with varying text (an
 * `in (…)` list, an optional filter) cannot grow it without end.
 */
export function cachingStatements(database: SqliteDatabase, capacity = DEFAULT_CAPACITY): SqliteDatabase {
  const cache = new Map<string, SqliteStatement & { readonly busy?: boolean }>();
  return {
    prepare(sql) {
      const cached = cache.get(sql);
      if (cached !== undefined) {
        if (cached.busy === true) return database.prepare(sql);
        // Most recently used last: Map keeps insertion order.
        cache.delete(sql);
        cache.set(sql, cached);
        return cached;
      }
      const statement = database.prepare(sql);
      cache.set(sql, statement);
      if (cache.size > capacity) cache.delete(cache.keys().next().value as string);
      return statement;
    },
    close() {
      cache.clear();
      database.close();
    },
  };
}
