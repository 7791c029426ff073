/**
 * The SQL adapter's prepared statements (src/storage/sql/prepared.ts): compiled once by Kysely,
 * run as the driver's own prepared statements.
 */
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, sql, SqliteDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { sqlStorage, type SqlStorage } from '../../src/storage/index.js';
import { param, statementPreparer } from '../../src/storage/sql/prepared.js';
import type { Database as Tables } from '../../src/storage/sql/schema.js';
import { dropSchema, POSTGRES_URL, postgresAvailability, uniqueSchema } from '../support/databases.js';

describe('prepared statements on SQLite', () => {
  async function sqlite() {
    const database = new Database(':memory:');
    const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database }) });
    await sql`create table oauth_ephemeral (key text primary key, value text, expires_at integer)`.execute(
      db,
    );
    const prepare = statementPreparer(db, { sqlite: database });
    const put = prepare(
      db.insertInto('oauth_ephemeral').values({ key: param, value: param, expires_at: param }),
    );
    const get = prepare(
      db
        .selectFrom('oauth_ephemeral')
        .select('value')
        .where('key', '=', param)
        .where('expires_at', '>', param),
    );
    const keys = async () =>
      (await db.selectFrom('oauth_ephemeral').select('key').orderBy('key').execute()).map((row) => row.key);
    return { database, db, put, get, keys };
  }

  it('binds the values in the order of param, and prepares the statement once', async () => {
    const { database, db, put, get } = await sqlite();
    await put(['a', '1', 10]);
    await put(['b', '2', 20]);
    let prepared = 0;
    const prepare = database.prepare.bind(database);
    database.prepare = ((text: string) => (prepared++, prepare(text))) as typeof database.prepare;
    expect(await get(['b', 15])).toEqual([{ value: '2' }]);
    expect(await get(['a', 15])).toEqual([]);
    expect(await get(['a', 5])).toEqual([{ value: '1' }]);
    expect(prepared).toBe(1);
    await db.destroy();
  });

  it('waits for a Kysely transaction instead of running inside it', async () => {
    const { db, put, keys } = await sqlite();
    let during: Promise<unknown> | undefined;
    await expect(
      db.transaction().execute(async (trx) => {
        await trx
          .insertInto('oauth_ephemeral')
          .values({ key: 'inside', value: 'x', expires_at: 1 })
          .execute();
        during = put(['outside', 'y', 2]);
        await new Promise((resolve) => setTimeout(resolve, 10));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await during;
    // Run inside the transaction, the write would have been rolled back with it.
    expect(await keys()).toEqual(['outside']);
    await db.destroy();
  });

  it('refuses a query with a value not given as param', async () => {
    const { db } = await sqlite();
    const prepare = statementPreparer(db, { sqlite: new Database(':memory:') });
    expect(() =>
      prepare(db.selectFrom('oauth_ephemeral').select('value').where('key', '=', 'session:x')),
    ).toThrow(/takes its values as param/);
    await db.destroy();
  });
});

it("compiles in the Kysely instance's schema, numbering the parameters for PostgreSQL", async () => {
  const texts: string[] = [];
  const client = {
    query: async (config: { text: string }) => (texts.push(config.text), { rows: [] }),
    release() {},
  };
  const pool = { connect: async () => client as never, end: async () => {} };
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) }).withSchema('tenant');
  const prepare = statementPreparer(db, { postgres: pool, named: true });
  await prepare(
    db.selectFrom('oauth_ephemeral').select('value').where('key', '=', param).where('expires_at', '>', param),
  )(['k', 1]);
  expect(texts).toEqual([
    'select "value" from "tenant"."oauth_ephemeral" where "key" = $1 and "expires_at" > $2',
  ]);
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
