/**
 * The SQL adapter's per-query shortcuts: SQLite statements prepared once per SQL text, and hot
 * queries compiled once with their values bound per call.
 */
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, sql, SqliteDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { sqlStorage, type SqlStorage } from '../../src/index.js';
import { prepareQuery } from '../../src/storage/sql/prepared.js';
import type { Database as Tables } from '../../src/storage/sql/schema.js';
import { cachingStatements } from '../../src/storage/sql/statements.js';
import { dropSchema, POSTGRES_URL, postgresAvailability, uniqueSchema } from '../support/databases.js';

describe('cachingStatements', () => {
  it('prepares each SQL text once, and again only when the cached statement is iterating', () => {
    const raw = new Database(':memory:');
    const db = cachingStatements(raw);
    const first = db.prepare('select 1 as x');
    expect(db.prepare('select 1 as x')).toBe(first);
    expect(db.prepare('select 2 as x')).not.toBe(first);
    const open = first.iterate([]);
    open.next();
    const during = db.prepare('select 1 as x');
    expect(during).not.toBe(first);
    expect(during.all([])).toEqual([{ x: 1 }]);
    open.return?.();
    expect(db.prepare('select 1 as x')).toBe(first);
    db.close();
    expect(raw.open).toBe(false);
    expect(() => first.all([])).toThrow('The database connection is not open');
  });

  it('keeps at most its capacity, the least recently used out first', () => {
    const db = cachingStatements(new Database(':memory:'), 2);
    const one = db.prepare('select 1');
    const two = db.prepare('select 2');
    expect(db.prepare('select 1')).toBe(one);
    db.prepare('select 3');
    expect(db.prepare('select 1')).toBe(one);
    expect(db.prepare('select 2')).not.toBe(two);
    db.close();
  });
});

describe('prepareQuery', () => {
  const sqlite = () => {
    const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
    return db;
  };

  it('binds new values to the SQL compiled once, keeping constants', async () => {
    const db = sqlite();
    await sql`create table oauth_ephemeral (key text primary key, value text, expires_at integer)`.execute(
      db,
    );
    const save = prepareQuery((p: { key: string; value: string; expiresAt: number }) =>
      db.insertInto('oauth_ephemeral').values({ key: p.key, value: p.value, expires_at: p.expiresAt }),
    );
    const find = prepareQuery((p: { key: string; now: number }) =>
      db
        .selectFrom('oauth_ephemeral')
        .select('value')
        .where('key', '=', p.key)
        .where('expires_at', '>', p.now),
    );
    await save(db, { key: 'a', value: '1', expiresAt: 10 });
    await save(db, { key: 'b', value: '2', expiresAt: 20 });
    expect((await find(db, { key: 'b', now: 15 })).rows).toEqual([{ value: '2' }]);
    expect((await find(db, { key: 'a', now: 15 })).rows).toEqual([]);
    await db.transaction().execute(async (trx) => {
      expect((await find(trx, { key: 'a', now: 5 })).rows).toEqual([{ value: '1' }]);
    });
    await db.destroy();
  });

  it('refuses a parameter computed with instead of bound as it is', async () => {
    const db = sqlite();
    expect(() =>
      prepareQuery((p: { sid: string }) =>
        db.selectFrom('oauth_ephemeral').select('value').where('key', '=', `session:${p.sid}`),
      ),
    ).toThrow(/parameter sid/);
    await db.destroy();
  });

  it("compiles in the Kysely instance's schema", () => {
    const db = new Kysely<Tables>({
      dialect: new PostgresDialect({
        pool: { connect: () => Promise.reject(new Error('unused')), end: async () => {} },
      }),
    }).withSchema('tenant');
    let compiled = '';
    prepareQuery((p: { key: string }) => {
      const query = db.selectFrom('oauth_ephemeral').select('value').where('key', '=', p.key);
      compiled = query.compile().sql;
      return query;
    });
    expect(compiled).toBe('select "value" from "tenant"."oauth_ephemeral" where "key" = $1');
  });
});

/** Every frequent operation once: what a login, a consent, a token request and a bearer check do. */
async function hotPath(storage: SqlStorage, now: number): Promise<void> {
  await storage.ephemeral.set('session:s', '{}', now + 60_000, now);
  await storage.ephemeral.get('session:s', now);
  await storage.ephemeral.add(`nonce:${now}`, '1', now + 60_000, now);
  await storage.ephemeral.take('session:s', now);
  await storage.ephemeral.increment('rate:client:c', now + 60_000, now);
  await storage.ephemeral.delete('rate:client:c');
  await storage.clients.find('c');
  await storage.grants.list({ userId: 'u', clientId: 'c' });
  await storage.grants.save({
    grantId: 'g',
    userId: 'u',
    clientId: 'c',
    scopes: ['read'],
    createdAt: now,
    updatedAt: now,
    revokedAt: null,
  });
  await storage.tokens.save({
    tokenHash: 't',
    type: 'access_token',
    grantId: 'g',
    clientId: 'c',
    userId: 'u',
    scopes: ['read'],
    createdAt: now,
    expiresAt: now + 3_600_000,
    origin: 'authorization_code',
    rotatedAt: null,
  });
  await storage.tokens.find('t');
}

describe('named statements on PostgreSQL', async () => {
  const available = (await postgresAvailability()).ok;
  const named = async (preparedStatements: boolean) => {
    const schema = uniqueSchema('named');
    // One connection, so the statements it prepared can be listed on it.
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    const storage = sqlStorage({ postgres: pool, schema, preparedStatements });
    await storage.migrate();
    const prepared = async () =>
      (await pool.query<{ statement: string }>('select statement from pg_prepared_statements')).rows.map(
        (row) => row.statement,
      );
    return {
      schema,
      storage,
      prepared,
      async dispose() {
        await storage.close();
        await dropSchema(schema);
      },
    };
  };

  it.skipIf(!available)('parses the frequent queries once per connection, and nothing else', async () => {
    const { storage, prepared, dispose } = await named(true);
    try {
      expect(await storage.clients.find('nobody')).toBeNull();
      expect(await storage.clients.find('nobody')).toBeNull();
      const statements = await prepared();
      expect(statements).toHaveLength(1);
      expect(statements[0]).toContain('"oauth_clients"');
    } finally {
      await dispose();
    }
  });

  it.skipIf(!available)('runs every hot query as a named statement, parsed once per connection', async () => {
    const { storage, prepared, dispose } = await named(true);
    try {
      const now = Date.now();
      await hotPath(storage, now);
      const once = await prepared();
      await hotPath(storage, now + 1);
      expect(await prepared()).toEqual(once);
      // ephemeral get, set, add, take, increment and delete; clients.find; grants.list by user
      // and client, grants.save; tokens.save and tokens.find.
      expect(once).toHaveLength(11);
      expect(once.filter((text) => text.includes('left join'))).toHaveLength(1);
    } finally {
      await dispose();
    }
  });

  it.skipIf(!available)('keeps working after a migration adds a column to a table it reads', async () => {
    const { schema, storage, dispose } = await named(true);
    try {
      const now = Date.now();
      await hotPath(storage, now);
      const before = await storage.tokens.find('t');
      expect(before?.grant?.grantId).toBe('g');
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      for (const table of ['oauth_tokens', 'oauth_grants', 'oauth_clients', 'oauth_ephemeral']) {
        await client.query(`alter table "${schema}".${table} add column later text`);
      }
      await client.end();
      expect(await storage.tokens.find('t')).toEqual(before);
      await hotPath(storage, now + 1);
    } finally {
      await dispose();
    }
  });

  it.skipIf(!available)('runs every query unnamed with preparedStatements: false', async () => {
    const { storage, prepared, dispose } = await named(false);
    try {
      expect(await storage.clients.find('nobody')).toBeNull();
      expect(await prepared()).toEqual([]);
    } finally {
      await dispose();
    }
  });
});
