import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { redactConnectionString } from '../redact.js';
import type { SqlStorage } from './adapter.js';
import { sqlStorage } from './handle.js';
import { migrations } from './migrations.js';

/** How {@link connectStorage} opens the database: migrations, and the PostgreSQL pool. */
export interface ConnectStorageOptions {
  /** Run the migrations before resolving. Default `false`: run them explicitly (`migrate`). */
  migrate?: boolean;
  /**
   * Without `migrate`: refuse a database whose schema is not up to date before resolving, with a
   * {@link DatabaseError} (`failure: 'not_migrated'`) that says to migrate, and open only a SQLite
   * file that exists (neither it nor its folder is created). Default `true`, so a server is never
   * started on a database every request would fail on. `false` opens the database as it is,
   * creating a SQLite file and its folder, for code that runs `storage.migrate()` itself (the
   * CLI's `migrate` does).
   */
  checkSchema?: boolean;
  /** PostgreSQL: most connections the pool opens. Default 10. */
  maxConnections?: number;
  /** PostgreSQL: how long to wait for a connection before failing, in ms. Default 5000. */
  connectionTimeoutMs?: number;
  /** PostgreSQL: the server cancels a statement running longer than this, in ms. Default 5000. */
  statementTimeoutMs?: number;
  /**
   * PostgreSQL: a statement gives up waiting for a lock after this long, in ms (`lock_timeout`).
   * Default: none, so `statementTimeoutMs` bounds the wait.
   */
  lockTimeoutMs?: number;
  /**
   * PostgreSQL: the server ends a session left idle inside a transaction this long, in ms
   * (`idle_in_transaction_session_timeout`), so a stuck transaction cannot hold locks. Default 10000.
   */
  idleInTransactionTimeoutMs?: number;
  /** PostgreSQL: an idle pooled connection is closed after this long, in ms. Default 10000. */
  idleTimeoutMs?: number;
  /** PostgreSQL: the `application_name` of the connections (see `pg_stat_activity`). Default `openid-oauth-bridge`. */
  applicationName?: string;
  /**
   * PostgreSQL: run the request path's statements as named prepared statements, parsed and
   * planned once per connection. Default `true`; set `false` behind a pooler that does not keep
   * prepared statements (PgBouncer in transaction mode before 1.21, or without
   * `max_prepared_statements`).
   */
  preparedStatements?: boolean;
  /** SQLite: how long a writer waits for another process's write lock, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * SQLite: how much of the database file is read through a memory map (`PRAGMA mmap_size`), in
   * MiB, at most 2047. Default 1024; `0` reads every page with a system call instead. The mapped
   * pages are the operating system's file cache: they show in the process's RSS once read, and the
   * system can reclaim them. With a map, a read error of the disk under the file stops the process
   * (SIGBUS) instead of failing the request (SQLite's documented trade-off).
   */
  mmapSizeMiB?: number;
}

/**
 * Opens the SQL adapter for a database URL, as the demo and the CLI do with `DATABASE_URL`:
 *
 * - `sqlite:./path/to/file.db` (relative to the working directory; the file and its folder are
 *   created only with `migrate: true` or `checkSchema: false`) or `sqlite::memory:`, with
 *   `better-sqlite3`;
 * - `postgres://user@host:5432/db` (or `postgresql://`), with `pg`. A `schema` query parameter
 *   (`?schema=oauth`) keeps the tables in that PostgreSQL schema.
 *
 * The driver is an optional peer dependency, loaded only when its kind of URL is used.
 *
 * Without `migrate`, the schema is checked before resolving: a database that was never migrated,
 * or lacks a later migration (a package upgraded without `openid-oauth-bridge migrate`), rejects
 * with a {@link DatabaseError} naming the database and what to run, instead of every request
 * failing later with the driver's `no such table`.
 *
 * @example
 * const storage = await connectStorage(process.env.DATABASE_URL ?? 'sqlite:./.data/oauth.db', { migrate: true });
 */
export async function connectStorage(url: string, options: ConnectStorageOptions = {}): Promise<SqlStorage> {
  if (typeof url !== 'string' || url.trim() === '') {
    throw new TypeError(
      `openid-oauth-bridge: connectStorage needs a database URL (got ${url === undefined ? 'undefined' : JSON.stringify(url)}); ` +
        'set DATABASE_URL, e.g. DATABASE_URL=sqlite:./.data/oauth.db or DATABASE_URL=postgres://user@localhost:5432/oauth',
    );
  }
  const storage = url.startsWith('sqlite:')
    ? await openSqlite(url.slice('sqlite:'.length), options)
    : /^postgres(ql)?:\/\//.test(url)
      ? await openPostgres(url, options)
      : null;
  if (storage === null) {
    throw new TypeError(
      `database URL must start with sqlite: or postgres:// (got ${JSON.stringify(redactConnectionString(url))})`,
    );
  }
  try {
    if (options.migrate === true) await storage.migrate();
    else if (options.checkSchema !== false) await checkSchema(storage, url);
  } catch (err) {
    await storage.close().catch(() => undefined);
    throw databaseError(err, url);
  }
  return storage;
}

/** Refuses a database with migrations still to run, naming them and what to do. */
async function checkSchema(storage: SqlStorage, url: string): Promise<void> {
  const pending = await storage.pendingMigrations();
  if (pending.length === 0) return;
  const ran = pending.length < Object.keys(migrations).length;
  throw notMigrated(
    url,
    ran ? `the schema is not up to date (not yet run: ${pending.join(', ')})` : 'the schema is not set up',
    new Error(`migrations not yet run: ${pending.join(', ')}`),
  );
}

/**
 * The error for a database without its schema (or a SQLite file that does not exist): what is
 * wrong, both ways to migrate, and for SQLite the absolute file, since a relative path opened
 * from another folder names another file.
 */
function notMigrated(url: string, what: string, cause: unknown): DatabaseError {
  const file = url.startsWith('sqlite:') ? sqliteFile(url) : undefined;
  const which = file === undefined ? '' : ` (the file is ${file}: is it the one you meant?)`;
  return new DatabaseError(
    'not_migrated',
    `openid-oauth-bridge: ${url.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL'} database ${redactConnectionString(url)}: ` +
      `${what}; run: npx openid-oauth-bridge migrate with this database's URL (--database-url or DATABASE_URL), or connect with connectStorage(url, { migrate: true })${which}`,
    { cause },
  );
}

/** SQLite's own ceiling for `mmap_size` (SQLITE_MAX_MMAP_SIZE, 0x7fff0000 bytes): larger is cut to it. */
const MAX_MMAP_MIB = 2047;

async function openSqlite(path: string, options: ConnectStorageOptions): Promise<SqlStorage> {
  if (path === '') throw new TypeError('a sqlite: URL needs a file path, e.g. sqlite:./.data/oauth.db');
  const { default: Database } = await importDriver<{ default: typeof import('better-sqlite3') }>(
    'better-sqlite3',
  );
  const mmapMiB = options.mmapSizeMiB ?? 1024;
  if (!Number.isSafeInteger(mmapMiB) || mmapMiB < 0 || mmapMiB > MAX_MMAP_MIB)
    throw new TypeError(`mmapSizeMiB must be a whole number of MiB from 0 to ${MAX_MMAP_MIB}`);
  const memory = path === ':memory:';
  // The file and its folder are made only when asked to (migrate, or checkSchema: false): a
  // mistyped path must not leave an empty database behind and start a server on it.
  const create = options.migrate === true || options.checkSchema === false;
  if (!memory && create) mkdirSync(dirname(resolve(path)), { recursive: true });
  if (!memory && !create) refuseMissingFile(path);
  let database: InstanceType<typeof Database>;
  try {
    database = new Database(memory ? ':memory:' : resolve(path), { fileMustExist: !memory && !create });
  } catch (err) {
    throw databaseError(err, `sqlite:${path}`);
  }
  // WAL: readers never wait for the writer, and a commit survives the process being killed.
  // synchronous=NORMAL is durable against a crash of the process (not of the machine's power).
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
  // A page cache of up to 64 MiB instead of SQLite's 2 MiB, filled only as pages are read: with
  // many stored tokens fewer index pages come from the file (see the bench README).
  database.pragma('cache_size = -65536');
  // Pages read through a memory map of the file, without a system call and a copy each: with a
  // million stored tokens the bearer check stays within a few percent of its cost at a thousand
  // (see the bench README, "Scale"). The mapped pages are the operating system's page cache, shared
  // and reclaimable; they count in the process's RSS once touched. SQLite still writes with write().
  database.pragma(`mmap_size = ${mmapMiB * 1024 * 1024}`);
  return sqlStorage({ sqlite: database });
}

/** A SQLite file that does not exist, refused as not migrated; another failure as it is. */
function refuseMissingFile(path: string): void {
  try {
    statSync(resolve(path));
  } catch (err) {
    const url = `sqlite:${path}`;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw notMigrated(url, 'the file does not exist, so the schema is not set up', err);
    throw databaseError(err, url);
  }
}

async function openPostgres(url: string, options: ConnectStorageOptions): Promise<SqlStorage> {
  const { default: pg } = await importDriver<typeof import('pg')>('pg');
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5000,
    idleTimeoutMillis: options.idleTimeoutMs ?? 10_000,
    statement_timeout: options.statementTimeoutMs ?? 5000,
    ...(options.lockTimeoutMs === undefined ? {} : { lock_timeout: options.lockTimeoutMs }),
    idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs ?? 10_000,
    application_name: options.applicationName ?? 'openid-oauth-bridge',
    // TCP keepalive notices a database host that vanished without closing the connection.
    keepAlive: true,
  });
  // An idle client whose connection the server dropped emits 'error' on the pool; without a
  // listener that would crash the process. The next query opens a fresh connection.
  pool.on('error', () => undefined);
  const preparedStatements = options.preparedStatements ?? true;
  return sqlStorage(
    schema === undefined
      ? { postgres: pool, preparedStatements }
      : { postgres: pool, schema, preparedStatements },
  );
}

async function importDriver<T>(name: 'better-sqlite3' | 'pg'): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (err) {
    if (
      (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' ||
      (err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND'
    ) {
      throw new Error(
        `openid-oauth-bridge: this database URL needs the "${name}" package: npm install ${name}`,
        {
          cause: err,
        },
      );
    }
    throw err;
  }
}

/** Why a database operation failed, for an operator: one of a few causes, or `other`. */
export type DatabaseFailure =
  'unreachable' | 'authentication' | 'no_database' | 'not_migrated' | 'duplicate' | 'cannot_open' | 'other';

/**
 * An error of the database, as one line an operator can act on: the database (its URL without
 * the password), the cause and what to do. `failure` classifies it; `cause` keeps the driver's error.
 */
export class DatabaseError extends Error {
  constructor(
    readonly failure: DatabaseFailure,
    message: string,
    options: { cause: unknown },
  ) {
    super(message, options);
    this.name = 'DatabaseError';
  }
}

/**
 * `err` from the driver (pg, better-sqlite3), described with the database it came from. An error
 * already described is returned as it is.
 */
export function databaseError(err: unknown, url: string): Error {
  if (err instanceof DatabaseError) return err;
  const e = (err ?? {}) as { code?: string; message?: string; errors?: { code?: string }[]; cause?: unknown };
  const code = e.code ?? e.errors?.[0]?.code;
  if (code === undefined && e.cause !== undefined) {
    // A wrapper (a failed migration): its cause says what went wrong.
    const inner = databaseError(e.cause, url) as DatabaseError;
    if (inner.failure !== 'other') return inner;
  }
  const detail = (e.message || (e.errors ? String(e.errors[0]) : String(err)))
    .replace(/^openid-oauth-bridge: /, '')
    .replace(/\s+/g, ' ')
    .trim();
  const where = redactConnectionString(url);
  const kind = url.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL';
  const make = (failure: DatabaseFailure, what: string) =>
    new DatabaseError(failure, `openid-oauth-bridge: ${kind} database ${where}: ${what}`, { cause: err });
  if (
    ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET'].includes(code ?? '')
  )
    return make(
      'unreachable',
      `unreachable (${code}); check that the server runs and the URL's host and port`,
    );
  if (/timeout|terminated unexpectedly/i.test(detail) && kind === 'PostgreSQL')
    return make(
      'unreachable',
      `unreachable (${detail}); check that the server runs and the URL's host and port`,
    );
  if (code === '28P01' || code === '28000')
    return make(
      'authentication',
      `authentication failed (${detail}); check the user and password in the URL`,
    );
  if (code === '3D000')
    return make('no_database', `${detail}; create it, or fix the database name in the URL`);
  if (code === '42P01' || code === '3F000' || /no such table/i.test(detail))
    return notMigrated(url, `the schema is not set up (${detail})`, err);
  if (code === '23505' || /^SQLITE_CONSTRAINT_(PRIMARYKEY|UNIQUE)$/.test(code ?? ''))
    return make('duplicate', `a row with this id exists already (${detail})`);
  if (
    ['SQLITE_CANTOPEN', 'EEXIST', 'ENOTDIR', 'EACCES', 'EROFS'].includes(code ?? '') ||
    /unable to open database file/i.test(detail)
  )
    return make(
      'cannot_open',
      `cannot open the file (${detail}); check that its folder exists and is writable`,
    );
  return make('other', detail);
}

/** The absolute path of a `sqlite:` URL's file, or `undefined` for an in-memory database. */
function sqliteFile(url: string): string | undefined {
  const path = url.slice('sqlite:'.length);
  return path === ':memory:' || path === '' ? undefined : resolve(path);
}
