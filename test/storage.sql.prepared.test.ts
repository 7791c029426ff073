/**
 * The SQL adapter's per-query shortcuts: SQLite statements prepared once per SQL text, and hot
 * queries compiled once with their values bound per call.
 */
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, sql, SqliteDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { sqlStorage } from '../src/index.js';
import { prepareQuery } from '../src/storage/sql/prepared.js';
import type { Database as Tables } from '../src/storage/sql/schema.js';
import { cachingStatements } from '../src/storage/sql/statements.js';
import { dropSchema, POSTGRES_URL, postgresAvailability, uniqueSchema } from './support/databases.js';

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
    await sql`create table oauth_sessions (sid text primary key, data text, expires_at integer)`.execute(db);
    const save = prepareQuery((p: { sid: string; data: string; expiresAt: number }) =>
      db.insertInto('oauth_sessions').values({ sid: p.sid, data: p.data, expires_at: p.expiresAt }),
    );
    const find = prepareQuery((p: { sid: string; now: number }) =>
      db.selectFrom('oauth_sessions').select('data').where('sid', '=', p.sid).where('expires_at', '>', p.now),
    );
    await save(db, { sid: 'a', data: '1', expiresAt: 10 });
    await save(db, { sid: 'b', data: '2', expiresAt: 20 });
    expect((await find(db, { sid: 'b', now: 15 })).rows).toEqual([{ data: '2' }]);
    expect((await find(db, { sid: 'a', now: 15 })).rows).toEqual([]);
    await db.transaction().execute(async (trx) => {
      expect((await find(trx, { sid: 'a', now: 5 })).rows).toEqual([{ data: '1' }]);
    });
    await db.destroy();
  });

  it('refuses a parameter computed with instead of bound as it is', async () => {
    const db = sqlite();
    expect(() =>
      prepareQuery((p: { sid: string }) =>
        db.selectFrom('oauth_sessions').select('data').where('sid', '=', `session:${p.sid}`),
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
    prepareQuery((p: { sid: string }) => {
      const query = db.selectFrom('oauth_sessions').select('data').where('sid', '=', p.sid);
      compiled = query.compile().sql;
      return query;
    });
    expect(compiled).toBe('select "data" from "tenant"."oauth_sessions" where "sid" = $1');
  });
});

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

  it.skipIf(!available)('keeps working after a migration adds a column to a table it reads', async () => {
    const { schema, storage, dispose } = await named(true);
    try {
      await storage.codes.create({
        codeHash: 'h',
        clientId: 'c',
        userId: 'u',
        redirectUri: 'https://app.example/cb',
        scopes: ['read'],
        grantId: 'g',
        codeChallenge: null,
        codeChallengeMethod: null,
        createdAt: Date.now(),
        expiresAt: Date.now() + 60_000,
      });
      expect((await storage.codes.consume('h', Date.now()))?.status).toBe('consumed');
      expect((await storage.codes.consume('h', Date.now()))?.status).toBe('replayed');
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`alter table "${schema}".oauth_codes add column later text`);
      await client.end();
      expect((await storage.codes.consume('h', Date.now()))?.status).toBe('replayed');
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
