/**
 * The schema the migrations create, pinned table by table on both engines: every column with its
 * type, nullability and default, every key and every index. A migration that changes any of it
 * changes this list too. Running the migrations again, as a second SQLite process racing the
 * first does, changes nothing; `down` drops what `up` created.
 */
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { migrations } from '../../src/storage/sql/migrations.js';
import { itOn, POSTGRES_URL, sqlEngines } from '../support/databases.js';

const engines = await sqlEngines('migration');
afterAll(engines.cleanup);

/**
 * Per table: columns in order (`name type`, then `primary key` for a one-column key, `not null`,
 * `default`), the composite keys and unique constraints, and the other indexes by name.
 */
interface TableSchema {
  columns: string[];
  keys: string[];
  indexes: string[];
}

const SCHEMA: Record<string, TableSchema> = {
  oauth_clients: {
    columns: [
      'client_id text primary key',
      'application_name text not null',
      'redirect_uri text not null',
      'grant_type text not null',
      'secret_hash text',
      'scopes text not null',
      'disabled integer not null default 0',
      'created_at bigint not null',
      'default_scopes text',
      "contacts text not null default ''",
      "post_logout_redirect_uris text not null default ''",
      'require_pkce integer not null default 0',
      "allowed_teams text not null default ''",
      "resources text not null default ''",
      "registered_via text not null default 'operator'",
      'unused_expires_at bigint',
      'owner_id text',
      'verified integer not null default 0',
      'awaiting_approval integer not null default 0',
      'description text',
      'homepage_uri text',
      'previous_secret_hash text',
      'previous_secret_expires_at bigint',
    ],
    keys: [],
    indexes: [
      'oauth_clients_owner_id (owner_id) where owner_id is not null',
      'oauth_clients_unused_expires_at (unused_expires_at) where unused_expires_at is not null',
    ],
  },
  oauth_ephemeral: {
    columns: ['key text primary key', 'value text not null', 'expires_at bigint not null'],
    keys: [],
    indexes: ['oauth_ephemeral_expires_at (expires_at)'],
  },
  oauth_grants: {
    columns: [
      'grant_id text not null',
      'user_id text not null',
      'client_id text not null',
      'scopes text not null',
      "resources text not null default ''",
      'created_at bigint not null',
      'updated_at bigint not null',
      'revoked_at bigint',
    ],
    keys: ['primary key (user_id, client_id)', 'unique (grant_id)'],
    indexes: [
      'oauth_grants_client_id (client_id)',
      'oauth_grants_revoked_at (revoked_at) where revoked_at is not null',
    ],
  },
  oauth_signing_keys: {
    columns: [
      'kid text primary key',
      'alg text not null',
      'state text not null',
      'public_jwk text not null',
      'sealed_private_jwk text not null',
      'created_at bigint not null',
      'activated_at bigint',
      'retired_at bigint',
    ],
    keys: [],
    indexes: [],
  },
  oauth_user_claims: {
    columns: ['subject text primary key', 'claims text not null'],
    keys: [],
    indexes: [],
  },
  oauth_tokens: {
    columns: [
      'token_hash text primary key',
      'type text not null',
      'grant_id text not null',
      'client_id text not null',
      'user_id text not null',
      'scopes text not null',
      "resources text not null default ''",
      'created_at bigint not null',
      'expires_at bigint',
      'origin text not null',
      'rotated_at bigint',
    ],
    keys: [],
    indexes: [],
  },
  oauth_users: {
    columns: [
      'id text primary key',
      'provider text not null',
      'identifier text not null',
      'created_at bigint not null',
    ],
    keys: ['unique (provider, identifier)'],
    indexes: [],
  },
  oauth_usage: {
    columns: ['client_id text not null', 'day text not null', 'kind text not null', 'count bigint not null'],
    keys: ['primary key (client_id, day, kind)'],
    indexes: ['oauth_usage_day (day)'],
  },
  oauth_usage_last: {
    columns: ['client_id text not null', 'user_id text not null', 'last_used_at bigint not null'],
    keys: ['primary key (client_id, user_id)'],
    indexes: ['oauth_usage_last_last_used_at (last_used_at)', 'oauth_usage_last_user_id (user_id)'],
  },
};

/** One column as SCHEMA lists it. */
function column(name: string, type: string, onlyKey: boolean, notNull: boolean, dflt: string | null) {
  return [
    `${name} ${type.toLowerCase()}`,
    onlyKey ? 'primary key' : notNull ? 'not null' : '',
    dflt === null ? '' : `default ${dflt}`,
  ]
    .filter(Boolean)
    .join(' ');
}

/** A database of the test, read and migrated outside the adapter. */
interface Raw {
  schema(): Promise<Record<string, TableSchema>>;
  /** Kysely on the database, in the adapter's PostgreSQL schema. */
  db: Kysely<unknown>;
  close(): Promise<void>;
}

function openSqlite(databaseUrl: string): Raw {
  const database = new Database(databaseUrl.slice('sqlite:'.length));
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database }) });
  const all = <T>(text: string, ...values: unknown[]) => database.prepare(text).all(...values) as T[];
  const indexSql = (name: string) =>
    (database.prepare('select sql from sqlite_master where name = ?').get(name) as { sql: string }).sql;
  return {
    db,
    async schema() {
      const result: Record<string, TableSchema> = {};
      const tables = all<{ name: string }>(
        `select name from sqlite_master where type = 'table'
           and name not like 'oauth_migrations%' and name not like 'sqlite_%' order by name`,
      );
      for (const { name: table } of tables) {
        const info = all<{
          name: string;
          type: string;
          notnull: number;
          dflt_value: string | null;
          pk: number;
        }>(`pragma table_info("${table}")`);
        const onlyKey = info.filter((c) => c.pk > 0).length === 1;
        const keys: string[] = [];
        const indexes: string[] = [];
        for (const index of all<{ name: string; unique: number; origin: string }>(
          `pragma index_list("${table}")`,
        )) {
          const columns = all<{ name: string }>(`pragma index_info("${index.name}")`).map((c) => c.name);
          const list = `(${columns.join(', ')})`;
          if (index.origin === 'pk') {
            if (!onlyKey) keys.push(`primary key ${list}`);
          } else if (index.origin === 'u') {
            keys.push(`unique ${list}`);
          } else {
            const where = / where (.*)$/i.exec(indexSql(index.name))?.[1]?.replace(/"/g, '');
            indexes.push(
              `${index.unique ? 'unique ' : ''}${index.name} ${list}${where === undefined ? '' : ` where ${where}`}`,
            );
          }
        }
        result[table] = {
          columns: info.map((c) =>
            column(c.name, c.type, c.pk > 0 && onlyKey, c.notnull === 1, c.dflt_value),
          ),
          keys: keys.sort(),
          indexes: indexes.sort(),
        };
      }
      return result;
    },
    close: () => db.destroy(),
  };
}

async function openPostgres(databaseUrl: string): Promise<Raw> {
  const schema = new URL(databaseUrl).searchParams.get('schema')!;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) }).withSchema(schema);
  const rows = async <T>(text: string) => (await client.query(text, [schema])).rows as T[];
  return {
    db,
    async schema() {
      const result: Record<string, TableSchema> = {};
      const table = (name: string) => (result[name] ??= { columns: [], keys: [], indexes: [] });
      const constraints = await rows<{ table: string; name: string; def: string; columns: number }>(
        `select t.relname as table, c.conname as name, pg_get_constraintdef(c.oid) as def,
                cardinality(c.conkey) as columns
           from pg_constraint c join pg_class t on t.oid = c.conrelid
           join pg_namespace n on n.oid = t.relnamespace
          where n.nspname = $1 and c.contype in ('p', 'u') and t.relname not like 'oauth_migrations%'`,
      );
      const onlyKeys = new Set(
        constraints
          .filter((c) => c.def.startsWith('PRIMARY KEY') && c.columns === 1)
          .map((c) => `${c.table}.${/\((.*)\)/.exec(c.def)![1]}`),
      );
      for (const c of await rows<{
        table_name: string;
        column_name: string;
        data_type: string;
        is_nullable: 'YES' | 'NO';
        column_default: string | null;
      }>(
        `select table_name, column_name, data_type, is_nullable, column_default
           from information_schema.columns
          where table_schema = $1 and table_name not like 'oauth_migrations%'
          order by table_name, ordinal_position`,
      )) {
        table(c.table_name).columns.push(
          column(
            c.column_name,
            c.data_type,
            onlyKeys.has(`${c.table_name}.${c.column_name}`),
            c.is_nullable === 'NO',
            c.column_default?.replace(/::[a-z ]+$/, '') ?? null,
          ),
        );
      }
      for (const c of constraints) {
        if (!(c.def.startsWith('PRIMARY KEY') && c.columns === 1))
          table(c.table).keys.push(c.def.toLowerCase());
      }
      const backing = new Set(constraints.map((c) => c.name));
      for (const index of await rows<{ tablename: string; indexname: string; indexdef: string }>(
        `select tablename, indexname, indexdef from pg_indexes
          where schemaname = $1 and tablename not like 'oauth_migrations%'`,
      )) {
        if (backing.has(index.indexname)) continue;
        const [, unique, list, where] =
          /^CREATE (UNIQUE )?INDEX \S+ ON \S+ USING btree (\(.*?\))(?: WHERE \((.*)\))?$/.exec(
            index.indexdef,
          )!;
        table(index.tablename).indexes.push(
          `${unique ? 'unique ' : ''}${index.indexname} ${list}${where === undefined ? '' : ` where ${where.toLowerCase()}`}`,
        );
      }
      for (const t of Object.values(result)) {
        t.keys.sort();
        t.indexes.sort();
      }
      return Object.fromEntries(Object.entries(result).sort(([a], [b]) => (a < b ? -1 : 1)));
    },
    async close() {
      await client.end();
      await db.destroy();
    },
  };
}

const openRaw = (databaseUrl: string) =>
  databaseUrl.startsWith('sqlite:') ? Promise.resolve(openSqlite(databaseUrl)) : openPostgres(databaseUrl);

/** Every migration, in the order they run. */
const NAMES = Object.keys(migrations).sort();

describe.each(engines.engines)('the migrations on $name', (engine) => {
  const test = itOn(engine);

  test('create the schema listed here, and only it', async () => {
    const databaseUrl = engine.url();
    const storage = await connectStorage(databaseUrl, { checkSchema: false });
    const raw = await openRaw(databaseUrl);
    try {
      expect(await storage.migrate()).toEqual(NAMES);
      expect(NAMES).toEqual(['001-initial']);
      expect(await raw.schema()).toEqual(SCHEMA);
    } finally {
      await storage.close();
      await raw.close();
    }
  });

  test('run again over their own tables (a racing SQLite process) without changing them', async () => {
    const databaseUrl = engine.url();
    const storage = await connectStorage(databaseUrl, { migrate: true });
    const raw = await openRaw(databaseUrl);
    const now = Date.now();
    try {
      await storage.ephemeral.set('kept', 'v', now + 60_000, now);
      for (const name of NAMES) await migrations[name]!.up(raw.db);
      expect(await raw.schema()).toEqual(SCHEMA);
      expect(await storage.ephemeral.get('kept', now)).toBe('v');
      expect(await storage.migrate()).toEqual([]);
    } finally {
      await storage.close();
      await raw.close();
    }
  });

  test('down drops every table up created (last migration first), and up creates them again', async () => {
    const databaseUrl = engine.url();
    const storage = await connectStorage(databaseUrl, { migrate: true });
    const raw = await openRaw(databaseUrl);
    try {
      for (const name of [...NAMES].reverse()) await migrations[name]!.down!(raw.db);
      expect(await raw.schema()).toEqual({});
      for (const name of NAMES) await migrations[name]!.up(raw.db);
      expect(await raw.schema()).toEqual(SCHEMA);
    } finally {
      await storage.close();
      await raw.close();
    }
  });
});
