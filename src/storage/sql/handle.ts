import { Kysely, PostgresDialect, type PostgresPool, SqliteDialect, type SqliteDatabase } from 'kysely';
import { createSqlStorage, type SqlStorage } from './adapter.js';
import { guardSqlFaults } from './faults.js';
import type { Database } from './schema.js';

/** A database handle for {@link sqlStorage}: a `pg` pool or a `better-sqlite3` database. */
export type SqlDatabaseHandle =
  | {
      /** A `pg` `Pool` (PostgreSQL). */
      postgres: PostgresPool;
      /** Keep the tables in this PostgreSQL schema (created by `migrate()`); default the search path. */
      schema?: string;
      /**
       * Run the request path's statements as named prepared statements, which each connection
       * has the server parse and plan once. Default `true`. Set `false` behind a connection pooler
       * that does not keep prepared statements (PgBouncer in transaction mode before 1.21, or
       * without `max_prepared_statements`).
       */
      preparedStatements?: boolean;
    }
  | {
      /** A `better-sqlite3` `Database`. WAL mode and a busy timeout are recommended (see docs/running-storage.md). */
      sqlite: SqliteDatabase;
    };

/**
 * The SQL storage adapter over a database handle you created: one code path (Kysely) for SQLite
 * and PostgreSQL. Run `await storage.migrate()` once at start (or the CLI's `migrate`).
 * `storage.close()` closes the handle.
 *
 * Single use is decided by the database itself (`DELETE … RETURNING` for `ephemeral.take`, an
 * upsert that overwrites only an expired row for `ephemeral.add`), so any number of app instances
 * can share one PostgreSQL database.
 *
 * A driver error meaning the database is unavailable (connection refused or lost, a timeout, too
 * many connections, a lock timeout, `SQLITE_BUSY`) is rethrown as a `StorageUnavailableError`,
 * which the endpoints answer with 503 and `Retry-After`.
 *
 * @example
 * import pg from 'pg';
 * const storage = sqlStorage({ postgres: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
 * await storage.migrate();
 */
export function sqlStorage(handle: SqlDatabaseHandle): SqlStorage {
  if ('postgres' in handle) {
    keepCheckedOutClientErrorsHandled(handle.postgres);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: handle.postgres }) });
    const named = handle.preparedStatements !== false;
    return guardSqlFaults(
      createSqlStorage(db, 'postgres', handle.schema, { postgres: handle.postgres, named }),
    );
  }
  if ('sqlite' in handle) {
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: handle.sqlite }) });
    return guardSqlFaults(createSqlStorage(db, 'sqlite', undefined, { sqlite: handle.sqlite }));
  }
  throw new TypeError('sqlStorage needs { postgres: pool } or { sqlite: database }');
}

/**
 * pg-pool listens for errors only on idle clients. A connection that dies under a query (the
 * server crashed, was stopped, or the network dropped) makes its checked-out client emit 'error'
 * with no listener, which crashes the process, although the query itself is already rejected
 * (and answered 503). A listener on every new client keeps it to that rejection; the pool drops
 * the client when it is released, since it is no longer queryable.
 */
function keepCheckedOutClientErrorsHandled(pool: PostgresPool): void {
  const events = pool as PostgresPool & {
    on?: (event: 'connect', listener: (client: { on(event: 'error', fn: () => void): void }) => void) => void;
  };
  events.on?.('connect', (client) => client.on('error', () => undefined));
}
