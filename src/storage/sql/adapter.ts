import { type Kysely, Migrator, sql } from 'kysely';
import type {
  ClientStore,
  EphemeralStore,
  KeyStore,
  PruneOptions,
  PruneResult,
  Storage,
  UserStore,
} from '../types.js';
import { sqlClientStore } from './clients.js';
import type { SqlContext, SqlDialectName } from './context.js';
import { sqlEphemeralStore } from './ephemeral.js';
import { sqlGrantStore } from './grants.js';
import { sqlKeyStore } from './keys.js';
import { migrationProvider, migrations } from './migrations.js';
import { statementPreparer, type StatementDriver } from './prepared.js';
import { pruneSqlStorage } from './prune.js';
import { sqlStorageReader } from './read.js';
import type { Database } from './schema.js';
import { sqlTokenStore } from './tokens.js';
import { sqlUserStore } from './users.js';
import { sqlUsageStore } from './usage.js';
import type { UsageStore } from '../usage-types.js';

export type { SqlDialectName } from './context.js';

/**
 * The SQL adapter: the whole storage contract, operator and optional methods included (the
 * reader answers several reads in one statement), with pruning and migrations. Tables: `oauth_ephemeral` (the ephemeral store), `oauth_clients`,
 * `oauth_users`, `oauth_grants`, `oauth_tokens`, and `oauth_usage` with `oauth_usage_last` (per-app usage).
 */
export interface SqlStorage extends Storage {
  readonly dialect: SqlDialectName;
  ephemeral: Required<EphemeralStore>;
  clients: Required<ClientStore>;
  users: Required<UserStore>;
  keys: KeyStore;
  usage: UsageStore;
  reader: NonNullable<Storage['reader']>;
  /**
   * Deletes expired ephemeral entries, grants revoked longer ago than the retention, and tokens
   * that can no longer work. Each statement deletes at most `batchSize` rows; rejects with a
   * `TypeError` if that is not a positive integer. Safe to run from several instances at once.
   */
  prune(now: number, options?: PruneOptions): Promise<PruneResult>;
  /**
   * Brings the schema up to date; resolves the names of the migrations it ran (none when already
   * current). Safe to run twice and from several instances at once: the migrator holds a lock.
   */
  migrate(): Promise<string[]>;
  /**
   * The names of the migrations not yet run on this database, in the order they would run (all
   * of them on an empty database). Reads only; `connectStorage` asks it before resolving, so a
   * database without its schema is refused at start rather than failing every request.
   */
  pendingMigrations(): Promise<string[]>;
  /** Closes the database handle (ends the pool, closes the SQLite file). */
  close(): Promise<void>;
}

/**
 * Builds the adapter over a Kysely instance. Use {@link sqlStorage} or `connectStorage(url)`
 * instead, which create the Kysely instance for a `pg` pool or a `better-sqlite3` database.
 *
 * @internal
 */
export function createSqlStorage(
  root: Kysely<Database>,
  dialect: SqlDialectName,
  schema: string | undefined,
  driver: StatementDriver,
): SqlStorage {
  const db = schema === undefined ? root : root.withSchema(schema);
  const ctx: SqlContext = { db, postgres: dialect === 'postgres', prepare: statementPreparer(root, driver) };

  const ephemeral = sqlEphemeralStore(ctx);
  const clients = sqlClientStore(ctx);
  const tokens = sqlTokenStore(ctx);
  const grants = sqlGrantStore(ctx);
  return {
    dialect,
    ephemeral,
    clients,
    users: sqlUserStore(ctx),
    grants,
    tokens,
    keys: sqlKeyStore(ctx),
    usage: sqlUsageStore(ctx),
    reader: sqlStorageReader(ctx, { ephemeral, clients, tokens, grants }),
    prune: (now, options) => pruneSqlStorage(ctx, now, options),

    async migrate() {
      if (schema !== undefined) await createSchema(root, schema);
      const migrator = new Migrator({
        db,
        provider: migrationProvider,
        migrationTableName: 'oauth_migrations',
        migrationLockTableName: 'oauth_migrations_lock',
        ...(schema === undefined ? {} : { migrationTableSchema: schema }),
      });
      let { error, results = [] } = await migrator.migrateToLatest();
      const applied = results.filter((result) => result.status === 'Success');
      // Two SQLite processes migrating at once both run an (idempotent) migration; the slower
      // one fails on recording it and retries from the next one (see migrations.ts). Each
      // retry makes progress, so there are at most as many as migrations.
      for (
        let retry = 0;
        error !== undefined && !ctx.postgres && retry < Object.keys(migrations).length;
        retry++
      ) {
        ({ error, results = [] } = await migrator.migrateToLatest());
        applied.push(...results.filter((result) => result.status === 'Success'));
      }
      if (error !== undefined) {
        const failed = results.find((result) => result.status === 'Error');
        throw new Error(
          `openid-oauth-bridge: ${failed?.migrationName ? `migration ${failed.migrationName} failed` : 'migration failed'}: ${(error as Error).message ?? error}`,
          { cause: error },
        );
      }
      return applied.map((result) => result.migrationName);
    },

    async pendingMigrations() {
      const names = Object.keys(migrations).sort();
      let ran: Set<string>;
      try {
        // Read directly rather than through Migrator.getMigrations, whose check for the table
        // lists every schema's tables and would find another schema's migrations table.
        const table = sql.table(schema === undefined ? 'oauth_migrations' : `${schema}.oauth_migrations`);
        const rows = await sql<{ name: string }>`select name from ${table}`.execute(db);
        ran = new Set(rows.rows.map((row) => row.name));
      } catch (err) {
        if (!isMissingTable(err)) throw err;
        ran = new Set();
      }
      return names.filter((name) => !ran.has(name));
    },

    async close() {
      await root.destroy();
    },
  };
}

/** The driver's error for a table (or PostgreSQL schema) that does not exist. */
function isMissingTable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return (
    code === '42P01' || code === '3F000' || (typeof message === 'string' && /no such table/i.test(message))
  );
}

/** `CREATE SCHEMA IF NOT EXISTS` can still fail when two instances run it at once: check again. */
async function createSchema(db: Kysely<Database>, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  } catch (err) {
    const exists = await sql<{ found: number }>`
      select 1 as found from information_schema.schemata where schema_name = ${schema}`.execute(db);
    if (exists.rows.length === 0) throw err;
  }
}
