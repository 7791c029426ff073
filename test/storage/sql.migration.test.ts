/**
 * Migration 005 moves a database of the old contract (consents, codes, access and refresh tokens,
 * revoked grants, nonces, sessions, rate limits) into grants, tokens and the ephemeral store,
 * keeping everything that still worked and nothing that did not.
 */
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { connectStorage, migrations, type SqlStorage } from '../../src/index.js';
import { ephemeralKeys, type StoredCode, type UsedCode } from '../../src/storage/keys.js';
import type { GrantRecord } from '../../src/storage/types.js';
import { POSTGRES_URL, sqlEngines } from '../support/databases.js';

const engines = await sqlEngines('migration');
afterAll(engines.cleanup);

const BEFORE = '2026-11-21-004-fewer-token-indexes';
const MIGRATION = '2026-11-25-005-storage-by-lifetime';
const OLD_TABLES = [
  'oauth_consents',
  'oauth_codes',
  'oauth_access_tokens',
  'oauth_refresh_tokens',
  'oauth_revoked_grants',
  'oauth_nonces',
  'oauth_sessions',
  'oauth_rate_limits',
];

/** Raw SQL on a database of the test, outside the adapter, with `?` placeholders on both engines. */
interface Raw {
  run(text: string, values?: unknown[]): Promise<void>;
  tables(): Promise<string[]>;
  /** Migrates with Kysely's migrator up to `name`, as an older release of the package did. */
  migrateTo(name: string): Promise<void>;
  close(): Promise<void>;
}

async function openRaw(databaseUrl: string): Promise<Raw> {
  const migrateTo = async (db: Kysely<unknown>, schema?: string) => {
    const migrator = new Migrator({
      db: schema === undefined ? db : db.withSchema(schema),
      provider: { getMigrations: async () => migrations },
      migrationTableName: 'oauth_migrations',
      migrationLockTableName: 'oauth_migrations_lock',
      ...(schema === undefined ? {} : { migrationTableSchema: schema }),
    });
    const { error } = await migrator.migrateTo(BEFORE);
    if (error !== undefined) throw error;
  };
  if (databaseUrl.startsWith('sqlite:')) {
    const database = new Database(databaseUrl.slice('sqlite:'.length));
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database }) });
    return {
      async run(text, values = []) {
        database.prepare(text).run(...values);
      },
      async tables() {
        const rows = database.prepare("select name from sqlite_master where type = 'table'").all();
        return (rows as { name: string }[]).map((row) => row.name);
      },
      migrateTo: (name) => (name === BEFORE ? migrateTo(db) : Promise.reject(new Error(name))),
      close: () => db.destroy(),
    };
  }
  const schema = new URL(databaseUrl).searchParams.get('schema')!;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`create schema if not exists "${schema}"`);
  await client.query(`set search_path to "${schema}"`);
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  return {
    async run(text, values = []) {
      let n = 0;
      await client.query(
        text.replace(/\?/g, () => `$${++n}`),
        values,
      );
    },
    async tables() {
      const { rows } = await client.query<{ table_name: string }>(
        'select table_name from information_schema.tables where table_schema = $1',
        [schema],
      );
      return rows.map((row) => row.table_name);
    },
    migrateTo: (name) => (name === BEFORE ? migrateTo(db, schema) : Promise.reject(new Error(name))),
    async close() {
      await client.end();
      await db.destroy();
    },
  };
}

const HOUR = 3_600_000;

/** One row of every old kind, live and dead, written as release 004 wrote them. */
async function insertOldRows(raw: Raw, now: number): Promise<void> {
  const later = now + HOUR;
  const earlier = now - HOUR;
  for (const clientId of ['c1', 'c2']) {
    await raw.run(
      `insert into oauth_clients (client_id, application_name, redirect_uri, grant_type, secret_hash, scopes,
        disabled, created_at, default_scopes, contacts, require_pkce)
       values (?, ?, 'https://app.example/cb', 'authorization_code', 'secret-hash', 'read write', 0, 1, null, '', 0)`,
      [clientId, `App ${clientId}`],
    );
  }
  await raw.run(
    `insert into oauth_users (id, provider, identifier, created_at) values ('u1', 'op', 'alice', 1)`,
  );
  const consent = `insert into oauth_consents (user_id, client_id, scopes, created_at, updated_at) values (?, ?, ?, ?, ?)`;
  await raw.run(consent, ['u1', 'c1', 'read write', 1000, 2000]);
  await raw.run(consent, ['u2', 'c1', 'read', 1500, 1500]);
  await raw.run(`insert into oauth_revoked_grants (grant_id, revoked_at) values ('old-revoked', ?)`, [
    earlier,
  ]);

  const access = `insert into oauth_access_tokens (token_hash, grant_id, client_id, user_id, scopes, origin, created_at, expires_at)
    values (?, ?, ?, ?, ?, ?, ?, ?)`;
  await raw.run(access, ['at-live', 'old-g1', 'c1', 'u1', 'read', 'authorization_code', 3000, later]);
  await raw.run(access, ['at-expired', 'old-g1', 'c1', 'u1', 'read', 'authorization_code', 3000, earlier]);
  await raw.run(access, ['at-revoked', 'old-revoked', 'c1', 'u1', 'read', 'authorization_code', 3000, later]);
  await raw.run(access, ['at-implicit', 'old-g3', 'c1', 'u2', 'read', 'implicit', 3000, later]);
  await raw.run(access, ['at-no-consent', 'old-g2', 'c2', 'u2', 'read', 'refresh_token', 4000, later]);

  const refresh = `insert into oauth_refresh_tokens (token_hash, grant_id, client_id, user_id, scopes, created_at, expires_at, rotated_at)
    values (?, ?, ?, ?, ?, ?, ?, ?)`;
  await raw.run(refresh, ['rt-live', 'old-g1', 'c1', 'u1', 'read write', 3000, null, null]);
  await raw.run(refresh, ['rt-rotated', 'old-g1', 'c1', 'u1', 'read write', 2500, null, 3000]);
  await raw.run(refresh, ['rt-expiring', 'old-g1', 'c1', 'u1', 'read', 3000, later, null]);
  await raw.run(refresh, ['rt-expired', 'old-g1', 'c1', 'u1', 'read', 3000, earlier, null]);
  await raw.run(refresh, ['rt-revoked', 'old-revoked', 'c1', 'u1', 'read', 3000, null, null]);
  await raw.run(refresh, ['rt-no-consent', 'old-g2', 'c2', 'u2', 'write', 3500, null, null]);

  const code = `insert into oauth_codes (code_hash, client_id, user_id, redirect_uri, scopes, grant_id, code_challenge,
      code_challenge_method, created_at, expires_at, used_at)
    values (?, ?, ?, 'https://app.example/cb', ?, ?, ?, ?, ?, ?, ?)`;
  await raw.run(code, [
    'code-unused',
    'c1',
    'u1',
    'read',
    'old-g4',
    'challenge',
    'S256',
    now - 1000,
    later,
    null,
  ]);
  await raw.run(code, ['code-used', 'c1', 'u1', 'read', 'old-g1', null, null, now - 1000, later, now - 500]);
  await raw.run(code, ['code-expired', 'c1', 'u1', 'read', 'old-g5', null, null, now - 2000, earlier, null]);
  await raw.run(code, [
    'code-revoked',
    'c1',
    'u1',
    'read',
    'old-revoked',
    null,
    null,
    now - 1000,
    later,
    null,
  ]);
  await raw.run(code, ['code-no-consent', 'c2', 'u3', 'read', 'old-g6', null, null, 5000, later, null]);

  await raw.run(
    `insert into oauth_sessions (sid, data, expires_at) values ('s-live', '{"passport":{}}', ?)`,
    [later],
  );
  await raw.run(`insert into oauth_sessions (sid, data, expires_at) values ('s-expired', '{}', ?)`, [
    earlier,
  ]);
  await raw.run(
    `insert into oauth_nonces (scope, nonce, expires_at) values ('https://op.example/server', 'n1', ?)`,
    [later],
  );
  await raw.run(
    `insert into oauth_nonces (scope, nonce, expires_at) values ('https://op.example/server', 'n0', ?)`,
    [earlier],
  );
  await raw.run(`insert into oauth_rate_limits (key, count, reset_at) values ('client:c1', 3, ?)`, [later]);
  await raw.run(`insert into oauth_rate_limits (key, count, reset_at) values ('address:192.0.2.1', 9, ?)`, [
    earlier,
  ]);
}

describe.each(engines.engines)('migration 005 on $name', ({ name, skip, url }) => {
  const test = it.skipIf(skip !== null);
  const suffix = skip === null ? '' : ` (${skip})`;

  test(`moves every old row that still worked, and drops the old tables${suffix}`, async () => {
    const databaseUrl = url();
    const raw = await openRaw(databaseUrl);
    let storage: SqlStorage | undefined;
    try {
      await raw.migrateTo(BEFORE);
      const now = Date.now();
      const later = now + HOUR;
      await insertOldRows(raw, now);
      storage = await connectStorage(databaseUrl);
      expect(await storage.migrate()).toEqual([MIGRATION]);

      // Grants: one per consent, and one per user and client that had live tokens or codes only.
      const grants = await storage.grants.list({});
      const grantOf = (userId: string, clientId: string): GrantRecord => {
        const grant = grants.find((g) => g.userId === userId && g.clientId === clientId);
        if (grant === undefined) throw new Error(`no grant for ${userId} and ${clientId}`);
        return grant;
      };
      expect(grants).toEqual([
        {
          grantId: expect.any(String),
          userId: 'u1',
          clientId: 'c1',
          scopes: ['read', 'write'],
          createdAt: 1000,
          updatedAt: 2000,
          revokedAt: null,
        },
        {
          grantId: expect.any(String),
          userId: 'u2',
          clientId: 'c1',
          scopes: ['read'],
          createdAt: 1500,
          updatedAt: 1500,
          revokedAt: null,
        },
        {
          grantId: expect.any(String),
          userId: 'u2',
          clientId: 'c2',
          scopes: ['read', 'write'],
          createdAt: 3500,
          updatedAt: 4000,
          revokedAt: null,
        },
        {
          grantId: expect.any(String),
          userId: 'u3',
          clientId: 'c2',
          scopes: ['read'],
          createdAt: 5000,
          updatedAt: 5000,
          revokedAt: null,
        },
      ]);
      expect(new Set(grants.map((g) => g.grantId)).size).toBe(4);
      for (const grant of grants) expect(grant.grantId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      const alice = grantOf('u1', 'c1');

      // Tokens: found with their grant (re-pointed) and client, in the one table.
      const c1 = await storage.clients.find('c1');
      expect(c1?.applicationName).toBe('App c1');
      expect(await storage.tokens.find('at-live')).toEqual({
        token: {
          tokenHash: 'at-live',
          type: 'access_token',
          grantId: alice.grantId,
          clientId: 'c1',
          userId: 'u1',
          scopes: ['read'],
          createdAt: 3000,
          expiresAt: later,
          origin: 'authorization_code',
          rotatedAt: null,
        },
        grant: alice,
        client: c1,
      });
      expect(await storage.tokens.find('rt-rotated')).toEqual({
        token: {
          tokenHash: 'rt-rotated',
          type: 'refresh_token',
          grantId: alice.grantId,
          clientId: 'c1',
          userId: 'u1',
          scopes: ['read', 'write'],
          createdAt: 2500,
          expiresAt: null,
          origin: 'authorization_code',
          rotatedAt: 3000,
        },
        grant: alice,
        client: c1,
      });
      const rtLive = await storage.tokens.find('rt-live');
      expect(rtLive?.token).toMatchObject({
        type: 'refresh_token',
        grantId: alice.grantId,
        rotatedAt: null,
        expiresAt: null,
      });
      expect((await storage.tokens.find('rt-expiring'))?.token).toMatchObject({
        expiresAt: later,
        rotatedAt: null,
      });
      const implicit = await storage.tokens.find('at-implicit');
      expect(implicit?.token.origin).toBe('implicit');
      expect(implicit?.grant).toEqual(grantOf('u2', 'c1'));
      for (const hash of ['at-no-consent', 'rt-no-consent']) {
        expect((await storage.tokens.find(hash))?.grant).toEqual(grantOf('u2', 'c2'));
      }
      for (const hash of ['at-expired', 'at-revoked', 'rt-expired', 'rt-revoked']) {
        expect(await storage.tokens.find(hash), hash).toBeNull();
      }

      // Codes: unused and used ones, as the library's JSON, re-pointed.
      const stored: StoredCode = {
        clientId: 'c1',
        userId: 'u1',
        redirectUri: 'https://app.example/cb',
        scopes: ['read'],
        grantId: alice.grantId,
        codeChallenge: 'challenge',
        codeChallengeMethod: 'S256',
        createdAt: now - 1000,
        expiresAt: later,
      };
      expect(JSON.parse((await storage.ephemeral.get(ephemeralKeys.code('code-unused'), now))!)).toEqual(
        stored,
      );
      const used: UsedCode = { grantId: alice.grantId, clientId: 'c1', userId: 'u1' };
      expect(JSON.parse((await storage.ephemeral.get(ephemeralKeys.usedCode('code-used'), now))!)).toEqual(
        used,
      );
      expect(await storage.ephemeral.get(ephemeralKeys.code('code-used'), now)).toBeNull();
      const noConsent = JSON.parse(
        (await storage.ephemeral.take(ephemeralKeys.code('code-no-consent'), now))!,
      );
      expect(noConsent.grantId).toBe(grantOf('u3', 'c2').grantId);
      for (const hash of ['code-expired', 'code-revoked']) {
        expect(await storage.ephemeral.get(ephemeralKeys.code(hash), now), hash).toBeNull();
        expect(await storage.ephemeral.get(ephemeralKeys.usedCode(hash), now), hash).toBeNull();
      }
      // A live entry keeps its expiry: absent from then on.
      expect(await storage.ephemeral.get(ephemeralKeys.code('code-unused'), later)).toBeNull();

      // Sessions, nonces and rate-limit counters, under their ephemeral keys.
      expect(await storage.ephemeral.get(ephemeralKeys.session('s-live'), now)).toBe('{"passport":{}}');
      expect(await storage.ephemeral.get(ephemeralKeys.session('s-live'), later)).toBeNull();
      expect(await storage.ephemeral.get(ephemeralKeys.session('s-expired'), 0)).toBeNull();
      const nonce = ephemeralKeys.nonce('https://op.example/server', 'n1');
      expect(await storage.ephemeral.add(nonce, '1', later, now)).toBe(false);
      expect(
        await storage.ephemeral.add(ephemeralKeys.nonce('https://op.example/server', 'n0'), '1', later, now),
      ).toBe(true);
      expect(
        await storage.ephemeral.increment(ephemeralKeys.rateLimit('client:c1'), now + 60_000, now),
      ).toEqual({
        count: 4,
        expiresAt: later,
      });
      expect(await storage.ephemeral.get(ephemeralKeys.rateLimit('address:192.0.2.1'), 0)).toBeNull();
      // Nothing expired came along: a prune right away finds nothing to delete.
      expect((await storage.prune(now)).ephemeral).toBe(0);

      const tables = await raw.tables();
      for (const table of OLD_TABLES) expect(tables, name).not.toContain(table);
      expect(tables).toEqual(expect.arrayContaining(['oauth_ephemeral', 'oauth_grants', 'oauth_tokens']));
      expect(await storage.migrate()).toEqual([]);
    } finally {
      await storage?.close();
      await raw.close();
    }
  });

  test(`moves everything once when two instances migrate at once${suffix}`, async () => {
    const databaseUrl = url();
    const raw = await openRaw(databaseUrl);
    const [first, second] = await Promise.all([connectStorage(databaseUrl), connectStorage(databaseUrl)]);
    try {
      await raw.migrateTo(BEFORE);
      const now = Date.now();
      await insertOldRows(raw, now);
      const ran = await Promise.all([first.migrate(), second.migrate()]);
      expect(ran.flat()).toEqual([MIGRATION]);
      const grants = await second.grants.list({});
      expect(grants).toHaveLength(4);
      const alice = grants.find((g) => g.userId === 'u1' && g.clientId === 'c1');
      for (const hash of ['at-live', 'rt-live', 'rt-rotated']) {
        expect((await first.tokens.find(hash))?.grant, hash).toEqual(alice);
      }
      const code = JSON.parse(
        (await first.ephemeral.get(ephemeralKeys.code('code-unused'), now))!,
      ) as StoredCode;
      expect(code.grantId).toBe(alice?.grantId);
    } finally {
      await Promise.all([first.close(), second.close()]);
      await raw.close();
    }
  });

  test(`migrates a database of 004 with nothing in it${suffix}`, async () => {
    const databaseUrl = url();
    const raw = await openRaw(databaseUrl);
    const storage = await connectStorage(databaseUrl);
    try {
      await raw.migrateTo(BEFORE);
      expect(await storage.migrate()).toEqual([MIGRATION]);
      expect(await storage.grants.list({})).toEqual([]);
    } finally {
      await storage.close();
      await raw.close();
    }
  });
});

describe('migration 005 on SQLite, run again by a second process', () => {
  it('finds the old tables gone and changes nothing', async () => {
    const databaseUrl = engines.engines[0]!.url();
    const raw = await openRaw(databaseUrl);
    const storage = await connectStorage(databaseUrl);
    const database = new Database(databaseUrl.slice('sqlite:'.length));
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database }) });
    try {
      await raw.migrateTo(BEFORE);
      const now = Date.now();
      await insertOldRows(raw, now);
      await storage.migrate();
      const grants = await storage.grants.list({});
      const token = await storage.tokens.find('at-live');
      await migrations[MIGRATION]!.up(db);
      expect(await storage.grants.list({})).toEqual(grants);
      expect(await storage.tokens.find('at-live')).toEqual(token);
    } finally {
      await db.destroy();
      await storage.close();
      await raw.close();
    }
  });
});
