/**
 * The SQLite adapter's direct path: a prepared query runs on its cached `better-sqlite3`
 * statement without Kysely's executor when, and only when, that gives what Kysely would.
 */
import Database from 'better-sqlite3';
import { CamelCasePlugin, Kysely, sql, SqliteDialect } from 'kysely';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sqlStorage, StorageUnavailableError } from '../../src/index.js';
import { createSqlStorage } from '../../src/storage/sql/adapter.js';
import { guardSqlFaults } from '../../src/storage/sql/faults.js';
import { type DirectRunner, prepareQuery } from '../../src/storage/sql/prepared.js';
import type { Database as Tables } from '../../src/storage/sql/schema.js';
import { sqliteKysely } from '../../src/storage/sql/sqlite-direct.js';
import { cachingStatements } from '../../src/storage/sql/statements.js';

const dir = mkdtempSync(join(tmpdir(), 'oob-direct-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/**
 * The runner of sqliteKysely, counting the queries it was asked to run, those it ran and those it
 * left to Kysely (the difference threw).
 */
function counted(database: Database.Database) {
  const { db, runDirectly } = sqliteKysely(database);
  const counts = { asked: 0, direct: 0, queued: 0 };
  const run: DirectRunner = (executor, text, parameters) => {
    counts.asked++;
    const result = runDirectly(executor, text, parameters);
    counts[result === undefined ? 'queued' : 'direct']++;
    return result;
  };
  return { db, run, counts };
}

/** An ephemeral table and its prepared queries, run through `run`. */
async function entries(database = new Database(':memory:')) {
  const { db, run, counts } = counted(database);
  await sql`create table oauth_ephemeral (key text primary key, value text not null, expires_at integer not null)`.execute(
    db,
  );
  const options = { runDirectly: run };
  const q = {
    save: prepareQuery(
      (p: { key: string; value: string }) =>
        db.insertInto('oauth_ephemeral').values({ key: p.key, value: p.value, expires_at: 1 }),
      options,
    ),
    find: prepareQuery(
      (p: { key: string }) =>
        db.selectFrom('oauth_ephemeral').select(['key', 'value']).where('key', '=', p.key),
      options,
    ),
    touch: prepareQuery(
      (p: { key: string; expiresAt: number }) =>
        db
          .updateTable('oauth_ephemeral')
          .set({ expires_at: p.expiresAt })
          .where('key', '=', p.key)
          .returning(['key', 'expires_at']),
      options,
    ),
    destroy: prepareQuery(
      (p: { key: string }) => db.deleteFrom('oauth_ephemeral').where('key', '=', p.key),
      options,
    ),
  };
  return { db, database, q, counts };
}

describe('the direct path on SQLite', () => {
  it('gives exactly the results Kysely gives, for reads, writes and RETURNING', async () => {
    const { db, q, counts } = await entries();
    const viaKysely = async <R>(run: () => Promise<R>): Promise<R> => {
      // A transaction held open on the side sends the query through Kysely's queue.
      let release!: () => void;
      const held = db.connection().execute(() => new Promise<void>((resolve) => (release = resolve)));
      await new Promise((resolve) => setImmediate(resolve));
      const result = run();
      release();
      await held;
      return result;
    };
    const steps: [string, () => Promise<unknown>][] = [
      ['insert', () => q.save(db, { key: `s${files++}`, value: 'x' })],
      ['select hit', () => q.find(db, { key: 'fixed' })],
      ['select miss', () => q.find(db, { key: 'nobody' })],
      ['update returning', () => q.touch(db, { key: 'fixed', expiresAt: 5 })],
      ['delete none', () => q.destroy(db, { key: 'nobody' })],
    ];
    await q.save(db, { key: 'fixed', value: 'y' });
    for (const [name, step] of steps) {
      const before = counts.direct;
      const direct = await step();
      expect(counts.direct, name).toBe(before + 1);
      const queued = await viaKysely(step);
      expect(counts.direct, name).toBe(before + 1);
      if (name === 'insert') {
        expect(direct).toEqual({ numAffectedRows: 1n, insertId: expect.any(BigInt), rows: [] });
        expect((queued as { insertId: bigint }).insertId).toBe(
          (direct as { insertId: bigint }).insertId + 1n,
        );
      } else {
        expect(direct, name).toEqual(queued);
        expect(Object.keys(direct as object), name).toEqual(Object.keys(queued as object));
      }
    }
    expect((await q.find(db, { key: 'fixed' })).rows).toEqual([{ key: 'fixed', value: 'y' }]);
    await db.destroy();
  });

  it('never joins a transaction: queries asked for during one run after it, outside it', async () => {
    const { db, q, counts } = await entries();
    let read: Promise<unknown> | undefined;
    let write: Promise<unknown> | undefined;
    await expect(
      db.transaction().execute(async (trx) => {
        await trx
          .insertInto('oauth_ephemeral')
          .values({ key: 'rolled-back', value: 'x', expires_at: 1 })
          .execute();
        // Inside the transaction, through it: sees its own row.
        expect((await q.find(trx, { key: 'rolled-back' })).rows).toHaveLength(1);
        // Beside the transaction: must wait for it, not run on its connection.
        read = q.find(db, { key: 'rolled-back' });
        write = q.save(db, { key: 'kept', value: 'y' });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(counts.direct).toBe(0);
    expect((await read!) as unknown).toEqual({ rows: [] });
    await write;
    expect((await q.find(db, { key: 'kept' })).rows).toEqual([{ key: 'kept', value: 'y' }]);
    expect((await q.find(db, { key: 'rolled-back' })).rows).toEqual([]);
    await db.destroy();
  });

  it('never overtakes a Kysely query asked for earlier', async () => {
    const { db, q } = await entries();
    await q.find(db, { key: 'warm-up' });
    const insert = db
      .insertInto('oauth_ephemeral')
      .values({ key: 'first', value: 'x', expires_at: 1 })
      .execute();
    const read = q.find(db, { key: 'first' });
    await insert;
    expect((await read).rows).toEqual([{ key: 'first', value: 'x' }]);
    await db.destroy();
  });

  it("never overtakes the very first Kysely query, which waits for the driver's initialisation", async () => {
    const database = new Database(':memory:');
    database.exec(
      'create table oauth_ephemeral (key text primary key, value text not null, expires_at integer)',
    );
    const { db, run, counts } = counted(database);
    const find = prepareQuery(
      (p: { key: string }) =>
        db.selectFrom('oauth_ephemeral').select(['key', 'value']).where('key', '=', p.key),
      { runDirectly: run },
    );
    const insert = db
      .insertInto('oauth_ephemeral')
      .values({ key: 'first', value: 'x', expires_at: 1 })
      .execute();
    const read = find(db, { key: 'first' });
    await insert;
    expect((await read).rows).toEqual([{ key: 'first', value: 'x' }]);
    expect(counts.queued).toBe(1);
    await db.destroy();
  });

  it('leaves a Kysely instance with plugins (a result transform) to Kysely', async () => {
    const { db, q, counts } = await entries();
    await q.save(db, { key: 's', value: 'x' });
    const camel = db.withPlugin(new CamelCasePlugin());
    const before = counts.direct;
    expect((await q.touch(camel, { key: 's', expiresAt: 7 })).rows).toEqual([{ key: 's', expiresAt: 7 }]);
    expect(counts.direct).toBe(before);
    await db.destroy();
  });

  it('waits for an open stream instead of writing while its statement iterates', async () => {
    const { db, q } = await entries();
    for (const key of ['a', 'b', 'c']) await q.save(db, { key, value: key });
    const writes: Promise<unknown>[] = [];
    const seen: string[] = [];
    for await (const row of db.selectFrom('oauth_ephemeral').select('key').orderBy('key').stream()) {
      seen.push(row.key);
      writes.push(q.save(db, { key: `${row.key}2`, value: 'z' }));
    }
    expect(seen).toEqual(['a', 'b', 'c']);
    await Promise.all(writes);
    expect((await q.find(db, { key: 'c2' })).rows).toEqual([{ key: 'c2', value: 'z' }]);
    await db.destroy();
  });

  it('rejects, never throws, with the driver error Kysely would reject with', async () => {
    const { db, q, counts } = await entries();
    await q.save(db, { key: 'dup', value: 'x' });
    const again = q.save(db, { key: 'dup', value: 'x' });
    const rejected = expect(again).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    // Asked twice, ran once: the second threw on the direct path.
    expect(counts).toEqual({ asked: 2, direct: 1, queued: 0 });
    await rejected;
    await expect(again).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    await db.destroy();
  });

  it('leaves a handle that is not better-sqlite3 (no open/inTransaction) to Kysely', async () => {
    const raw = new Database(':memory:');
    const { db, run, counts } = counted({
      prepare: (text: string) => raw.prepare(text),
      close: () => raw.close(),
    } as never);
    const find = prepareQuery(() => db.selectNoFrom(sql<number>`1`.as('one')), { runDirectly: run });
    expect((await find(db, {})).rows).toEqual([{ one: 1 }]);
    expect((await find(db, {})).rows).toEqual([{ one: 1 }]);
    expect(counts).toEqual({ asked: 2, direct: 0, queued: 2 });
    await db.destroy();
  });
});

describe('the SQLite adapter over the direct path', () => {
  /** The adapter as sqlStorage builds it, and one over plain Kysely (the path before). */
  async function both(busyTimeoutMs = 5000) {
    const open = (file: string) => {
      const database = new Database(join(dir, file));
      database.pragma('journal_mode = WAL');
      database.pragma(`busy_timeout = ${busyTimeoutMs}`);
      return database;
    };
    const n = files++;
    const directDb = open(`direct-${n}.db`);
    const { db, run, counts } = counted(directDb);
    const direct = guardSqlFaults(createSqlStorage(db, 'sqlite', undefined, { runDirectly: run }));
    const plainDb = open(`plain-${n}.db`);
    const plain = guardSqlFaults(
      createSqlStorage(
        new Kysely<Tables>({ dialect: new SqliteDialect({ database: cachingStatements(plainDb) }) }),
        'sqlite',
        undefined,
      ),
    );
    await direct.migrate();
    await plain.migrate();
    return { direct, plain, counts, file: join(dir, `direct-${n}.db`) };
  }

  it('is what sqlStorage({ sqlite }) uses: a hot write is done before the call returns', async () => {
    const database = new Database(join(dir, `wired-${files++}.db`));
    const storage = sqlStorage({ sqlite: database });
    await storage.migrate();
    const saving = storage.ephemeral.set('session:s', '{}', Date.now() + 1000, Date.now());
    // No await yet: only the direct path can have run the insert.
    expect(database.prepare('select key from oauth_ephemeral').all()).toEqual([{ key: 'session:s' }]);
    await saving;
    await storage.close();
  });

  it('answers every frequent operation as the Kysely path does', async () => {
    const { direct, plain, counts } = await both();
    const now = 1_700_000_000_000;
    const script = async (s: typeof direct) => {
      const out: unknown[] = [];
      await s.clients.create({
        clientId: 'c',
        applicationName: 'App',
        redirectUri: 'https://app.example/cb',
        grantType: 'authorization_code',
        secretHash: 'h',
        scopes: ['read', 'write'],
        defaultScopes: ['read'],
        contacts: [],
        disabled: false,
        createdAt: now,
      });
      out.push(await s.clients.find('c'), await s.clients.find('nobody'));
      const identity = { provider: 'https://op.example', identifier: 'id' };
      out.push(
        await s.users.findOrCreate(identity, 'u', now),
        await s.users.findOrCreate(identity, 'v', now),
      );
      out.push(await s.users.find('u'), await s.users.find('v'));
      const grant = {
        grantId: 'g',
        userId: 'u',
        clientId: 'c',
        scopes: ['read'],
        createdAt: now,
        updatedAt: now,
        revokedAt: null,
      };
      out.push(await s.grants.list({ userId: 'u', clientId: 'c' }));
      await s.grants.save(grant);
      out.push(await s.grants.list({ userId: 'u', clientId: 'c' }));
      const token = {
        grantId: 'g',
        clientId: 'c',
        userId: 'u',
        scopes: ['read'],
        createdAt: now,
        origin: 'authorization_code' as const,
        rotatedAt: null,
      };
      await s.tokens.save({ ...token, tokenHash: 'a', type: 'access_token', expiresAt: now + 1 });
      await s.tokens.save({ ...token, tokenHash: 'r', type: 'refresh_token', expiresAt: null });
      out.push(await s.tokens.find('a'), await s.tokens.find('r'), await s.tokens.find('x'));
      await s.tokens.save({
        ...token,
        tokenHash: 'r',
        type: 'refresh_token',
        expiresAt: null,
        rotatedAt: now,
      });
      await s.grants.save({ ...grant, revokedAt: now });
      out.push(await s.tokens.find('r'));
      const e = s.ephemeral;
      out.push(
        await e.add('code:x', '{"a":1}', now + 1000, now),
        await e.add('code:x', '{}', now + 1000, now),
      );
      out.push(await e.get('code:x', now), await e.take('code:x', now), await e.take('code:x', now));
      out.push(await e.increment('rate:k', now + 1000, now), await e.increment('rate:k', now + 1000, now));
      out.push(await e.increment('rate:k', now + 2000, now + 1000));
      await e.set('session:s', '{"a":1}', now + 1000, now);
      await e.set('session:s', '{"a":2}', now + 2000, now);
      out.push(await e.get('session:s', now + 1500), await e.get('session:s', now + 2000));
      await e.delete('session:s');
      out.push(await e.get('session:s', now));
      return out;
    };
    const expected = await script(plain);
    expect(await script(direct)).toEqual(expected);
    expect(counts.direct).toBeGreaterThan(25);
    await Promise.all([direct.close(), plain.close()]);
  });

  it('turns SQLITE_BUSY on the direct path into StorageUnavailableError', async () => {
    const { direct, plain, counts, file } = await both(20);
    await direct.clients.find('warm-up');
    const other = new Database(file);
    try {
      other.exec('BEGIN EXCLUSIVE');
      const before = { ...counts };
      const saving = direct.ephemeral.set('session:s', '{}', Date.now() + 1000, Date.now());
      // Asked, neither ran nor queued: it threw on the direct path.
      expect(counts).toEqual({ ...before, asked: before.asked + 1 });
      const err = await saving.then(
        () => null,
        (error: unknown) => error,
      );
      expect(err).toBeInstanceOf(StorageUnavailableError);
      expect((err as StorageUnavailableError).retryAfterSeconds).toBe(1);
      expect(((err as Error).cause as { code: string }).code).toMatch(/^SQLITE_BUSY/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await direct.ephemeral.set('session:s', '{}', Date.now() + 1000, Date.now());
    await Promise.all([direct.close(), plain.close()]);
  });

  it('fails after close() with the error the Kysely path gives', async () => {
    const { direct, plain, counts } = await both();
    await Promise.all([direct.close(), plain.close()]);
    const queued = counts.queued;
    const message = async (s: typeof direct) =>
      s.tokens.find('a').then(
        () => 'resolved',
        (err: Error) => err.message,
      );
    expect(await message(direct)).toBe(await message(plain));
    expect(counts.queued).toBe(queued + 1);
  });
});
