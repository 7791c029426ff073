/**
 * What the SQL adapter promises beyond the storage contract (which the conformance kit checks):
 * migrations safe to repeat and to race, single-winner ephemeral operations across instances,
 * batched pruning safe to race, client removal that no token survives, outages reported as such
 * by every method, hashes only at rest, and the database URLs of the demo and CLI.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { connectStorage, StorageUnavailableError } from '../../src/index.js';
import { sqlStorage, type SqlStorage } from '../../src/storage/index.js';
import { migrations } from '../../src/storage/sql/migrations.js';
import type { ClientRecord, GrantRecord, TokenRecord } from '../../src/storage/types.js';
import { createTestApp } from '../support/app.js';
import { POSTGRES_URL, sqlEngines, uniqueSchema } from '../support/databases.js';
import { exchangeCode, obtainCode } from '../support/flow.js';

const sql = await sqlEngines('sql');
const { engines, postgres, dir } = sql;
afterAll(sql.cleanup);

const NOW = 1_700_000_000_000;
const DAY = 86_400_000;

const client = (clientId: string): ClientRecord => ({
  clientId,
  applicationName: 'App',
  redirectUri: 'https://app.example/cb',
  grantType: 'authorization_code',
  secretHash: 'h',
  scopes: ['read'],
  disabled: false,
  createdAt: NOW,
});
const grant = (
  grantId: string,
  userId: string,
  clientId: string,
  revokedAt: number | null = null,
): GrantRecord => ({
  grantId,
  userId,
  clientId,
  scopes: ['read'],
  createdAt: NOW,
  updatedAt: NOW,
  revokedAt,
});
const token = (
  tokenHash: string,
  grantId: string,
  clientId: string,
  expiresAt: number | null,
): TokenRecord => ({
  tokenHash,
  type: expiresAt === null ? 'refresh_token' : 'access_token',
  grantId,
  clientId,
  userId: 'u',
  scopes: ['read'],
  createdAt: NOW,
  expiresAt,
  origin: 'authorization_code',
  rotatedAt: null,
});

describe.each(engines)('SQL adapter on $name', ({ skip, url }) => {
  const test = it.skipIf(skip !== null);
  const suffix = skip === null ? '' : ` (${skip})`;

  /** Two adapters on one fresh database, as two app instances would be. */
  async function twoInstances() {
    const databaseUrl = url();
    const first = await connectStorage(databaseUrl, { migrate: true });
    const second = await connectStorage(databaseUrl);
    return { first, second, close: () => Promise.all([first.close(), second.close()]) };
  }

  test(`migrates once, and a second run does nothing${suffix}`, async () => {
    const storage = await connectStorage(url(), { checkSchema: false });
    try {
      expect(await storage.migrate()).toEqual(Object.keys(migrations));
      expect(await storage.migrate()).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  test(`migrates from two instances at once without failing or running twice${suffix}`, async () => {
    const databaseUrl = url();
    const [first, second] = await Promise.all([
      connectStorage(databaseUrl, { checkSchema: false }),
      connectStorage(databaseUrl, { checkSchema: false }),
    ]);
    try {
      const ran = await Promise.all([first.migrate(), second.migrate()]);
      expect(ran.flat()).toEqual(Object.keys(migrations));
      expect(await first.ephemeral.add('k', 'v', Date.now() + 1000, Date.now())).toBe(true);
      expect(await second.ephemeral.add('k', 'v', Date.now() + 1000, Date.now())).toBe(false);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test(`lets exactly one of racing instances add or take an entry, and counts distinctly${suffix}`, async () => {
    const { first, second, close } = await twoInstances();
    const both = <T>(n: number, call: (s: SqlStorage, i: number) => Promise<T>) =>
      Promise.all(Array.from({ length: n }, (_, i) => call(i % 2 === 0 ? first : second, i)));
    try {
      const added = await both(20, (s, i) => s.ephemeral.add('fresh', `v${i}`, NOW + 1000, NOW));
      expect(added.filter(Boolean)).toHaveLength(1);
      const winner = `v${added.indexOf(true)}`;
      expect(await second.ephemeral.get('fresh', NOW)).toBe(winner);

      // An expired entry is overwritten by exactly one of the racers, with its new expiry.
      await first.ephemeral.set('stale', 'old', NOW, NOW - 1);
      const replaced = await both(20, (s, i) => s.ephemeral.add('stale', `v${i}`, NOW + 5000, NOW));
      expect(replaced.filter(Boolean)).toHaveLength(1);
      expect(await first.ephemeral.get('stale', NOW + 4999)).toBe(`v${replaced.indexOf(true)}`);
      expect(await first.ephemeral.get('stale', NOW + 5000)).toBeNull();

      const taken = await both(20, (s) => s.ephemeral.take('fresh', NOW));
      expect(taken.filter((value) => value !== null)).toEqual([winner]);
      expect(await first.ephemeral.take('stale', NOW + 5000)).toBeNull();

      const counts = await both(30, (s) => s.ephemeral.increment('counter', NOW + 60_000, NOW));
      expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 30 }, (_, i) => i + 1),
      );
      expect(new Set(counts.map((c) => c.expiresAt))).toEqual(new Set([NOW + 60_000]));
      expect(await first.ephemeral.get('counter', NOW)).toBe('30');
      // An expired counter starts again from 1, with the new expiry.
      expect(await second.ephemeral.increment('counter', NOW + 120_000, NOW + 60_000)).toEqual({
        count: 1,
        expiresAt: NOW + 120_000,
      });
      await first.ephemeral.delete('counter');
      expect(await second.ephemeral.get('counter', NOW)).toBeNull();
    } finally {
      await close();
    }
  });

  test(`prunes in batches, from two instances at once, and keeps what still works${suffix}`, async () => {
    const { first, second, close } = await twoInstances();
    try {
      for (let i = 0; i < 1200; i++) await first.ephemeral.set(`old-${i}`, '1', NOW - 1, NOW - 2);
      await first.ephemeral.set('live', '1', NOW + 1, NOW);
      for (const id of ['c', 'other']) await first.clients.create(client(id));
      await first.grants.save(grant('standing', 'u', 'c'));
      await first.grants.save(grant('revoked-lately', 'u2', 'c', NOW - DAY));
      await first.grants.save(grant('revoked-long-ago', 'u3', 'c', NOW - 31 * DAY));
      await first.grants.save(grant('replaced', 'u4', 'c', NOW - DAY));
      await first.grants.save(grant('replacement', 'u4', 'c'));
      await first.grants.save(grant('of-removed-client', 'u', 'other'));
      const live = ['live-access', 'live-refresh'];
      await first.tokens.save(token('live-access', 'standing', 'c', NOW + 1));
      await first.tokens.save(token('live-refresh', 'standing', 'c', null));
      for (let i = 0; i < 700; i++) await first.tokens.save(token(`expired-${i}`, 'standing', 'c', NOW));
      await first.tokens.save(token('of-revoked', 'revoked-lately', 'c', null));
      await first.tokens.save(token('of-replaced', 'replaced', 'c', null));
      await first.tokens.save(token('of-no-grant', 'never-saved', 'c', null));
      await first.tokens.save(token('of-removed-client', 'of-removed-client', 'other', null));
      expect(await first.clients.remove('other')).toBe(true);

      const results = await Promise.all([
        first.prune(NOW, { batchSize: 100 }),
        second.prune(NOW, { batchSize: 100 }),
      ]);
      const sum = (kind: 'ephemeral' | 'tokens' | 'grants') => results[0]![kind] + results[1]![kind];
      expect(sum('ephemeral')).toBe(1200);
      expect(sum('tokens')).toBe(704);
      expect(sum('grants')).toBe(1);
      expect(await first.ephemeral.get('live', NOW)).toBe('1');
      for (const hash of live) expect((await first.tokens.find(hash))?.grant?.grantId).toBe('standing');
      for (const hash of ['expired-0', 'of-revoked', 'of-replaced', 'of-no-grant', 'of-removed-client']) {
        expect(await first.tokens.find(hash), hash).toBeNull();
      }
      expect((await first.grants.list({})).map((g) => g.grantId).sort()).toEqual([
        'replacement',
        'revoked-lately',
        'standing',
      ]);
      expect(await second.prune(NOW)).toEqual({ ephemeral: 0, tokens: 0, grants: 0, clients: 0, usage: 0 });
      expect(await second.prune(NOW, { revokedGrantRetentionMs: DAY })).toEqual({
        ephemeral: 0,
        tokens: 0,
        grants: 1,
        clients: 0,
        usage: 0,
      });
      await expect(first.prune(NOW, { batchSize: 0 })).rejects.toThrow(/batchSize/);
    } finally {
      await close();
    }
  });

  test(`replaces a grant by user and client, and refuses a grant id taken by another pair${suffix}`, async () => {
    const storage = await connectStorage(url(), { migrate: true });
    try {
      await storage.grants.save(grant('g1', 'u', 'c', NOW));
      await storage.grants.save({ ...grant('g2', 'u', 'c'), scopes: ['read', 'write'] });
      expect(await storage.grants.list({ userId: 'u', clientId: 'c' })).toEqual([
        { ...grant('g2', 'u', 'c'), scopes: ['read', 'write'] },
      ]);
      await expect(storage.grants.save(grant('g2', 'v', 'c'))).rejects.toThrow();
      expect(await storage.grants.list({ clientId: 'c' })).toHaveLength(1);
    } finally {
      await storage.close();
    }
  });

  test(`updates only the client fields given, and removes a client so no token of it comes back${suffix}`, async () => {
    const storage = await connectStorage(url(), { migrate: true });
    try {
      await storage.clients.create({ ...client('native'), requirePkce: true, contacts: ['ops@example.com'] });
      await expect(storage.clients.create(client('native'))).rejects.toThrow();
      expect((await storage.clients.find('native'))?.requirePkce).toBe(true);
      const updated = await storage.clients.update('native', {
        requirePkce: false,
        applicationName: undefined,
        defaultScopes: undefined,
      });
      expect(updated).toEqual({
        ...client('native'),
        contacts: ['ops@example.com'],
        postLogoutRedirectUris: [],
        defaultScopes: null,
        requirePkce: false,
        // The flags are read as booleans, as disabled and requirePkce are.
        verified: false,
        awaitingApproval: false,
      });
      expect(await storage.clients.update('native', {})).toEqual(updated);
      expect(await storage.clients.update('nobody', { disabled: true })).toBeNull();

      await storage.grants.save(grant('g', 'u', 'native'));
      await storage.tokens.save(token('t', 'g', 'native', null));
      expect(await storage.clients.remove('native')).toBe(true);
      expect(await storage.clients.remove('native')).toBe(false);
      await storage.clients.create(client('native'));
      const found = await storage.tokens.find('t');
      expect(found?.grant ?? null).toBeNull();
      expect(await storage.grants.list({ clientId: 'native' })).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  test(`stores only hashes of codes, tokens and client secrets${suffix}`, async () => {
    const databaseUrl = url();
    const storage = await connectStorage(databaseUrl, { migrate: true });
    const t = await createTestApp({ storage });
    try {
      const { code } = await obtainCode(t);
      const tokens = (await exchangeCode(t, code)).body as Record<string, string>;
      const secrets = [code, tokens.access_token!, tokens.refresh_token!, t.codeClient.clientSecret];
      const dump = JSON.stringify(await everyRow(databaseUrl));
      expect(dump).toContain(t.codeClient.clientId); // The dump does hold the rows.
      expect(dump).toContain('"access_token"');
      for (const secret of secrets) expect(dump).not.toContain(secret);
    } finally {
      await t.close();
      await storage.close();
    }
  });
});

describe('database URLs', () => {
  it('refuses an unknown scheme, naming it without the password', async () => {
    await expect(connectStorage('mysql://root:hunter2@db/oauth')).rejects.toThrow(
      /must start with sqlite: or postgres:\/\/ \(got "mysql:\/\/root:\*\*\*@db\/oauth"\)/,
    );
    await expect(connectStorage('sqlite:')).rejects.toThrow(/needs a file path/);
  });

  it('creates the folder of a sqlite: file', async () => {
    const storage = await connectStorage(`sqlite:${join(dir, 'nested', 'deeper', 'oauth.db')}`, {
      migrate: true,
    });
    expect(storage.dialect).toBe('sqlite');
    await storage.close();
  });

  it('takes a better-sqlite3 database handle in code', async () => {
    const storage = sqlStorage({ sqlite: new Database(':memory:') });
    await storage.migrate();
    expect(await storage.clients.find('nobody')).toBeNull();
    await storage.close();
  });

  it.skipIf(!postgres.ok)('takes a pg pool in code, with a schema of its own', async () => {
    const schema = uniqueSchema('handle');
    sql.track(schema);
    const storage = sqlStorage({ postgres: new pg.Pool({ connectionString: POSTGRES_URL }), schema });
    await storage.migrate();
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    const tables = await client.query(
      'select table_name from information_schema.tables where table_schema = $1',
      [schema],
    );
    await client.end();
    expect(tables.rows.map((row: { table_name: string }) => row.table_name)).toEqual(
      expect.arrayContaining(['oauth_ephemeral', 'oauth_grants', 'oauth_tokens']),
    );
    await storage.close();
  });

  it('reports an unreachable PostgreSQL as StorageUnavailableError from every method', async () => {
    // Opened unchecked: the check would refuse it at once (unreachable); here the methods are tested.
    const storage = await connectStorage('postgres://root@127.0.0.1:1/test', {
      connectionTimeoutMs: 1000,
      checkSchema: false,
    });
    try {
      const calls: Record<string, () => Promise<unknown>> = {
        'ephemeral.get': () => storage.ephemeral.get('k', NOW),
        'ephemeral.set': () => storage.ephemeral.set('k', 'v', NOW + 1, NOW),
        'ephemeral.add': () => storage.ephemeral.add('k', 'v', NOW + 1, NOW),
        'ephemeral.take': () => storage.ephemeral.take('k', NOW),
        'ephemeral.replace': () => storage.ephemeral.replace('k', 'v', 'w', NOW + 1, NOW),
        'ephemeral.increment': () => storage.ephemeral.increment('k', NOW + 1, NOW),
        'ephemeral.delete': () => storage.ephemeral.delete('k'),
        'ephemeral.prune': () => storage.ephemeral.prune(NOW),
        'clients.find': () => storage.clients.find('c'),
        'clients.create': () => storage.clients.create(client('c')),
        'clients.list': () => storage.clients.list(),
        'clients.update': () => storage.clients.update('c', { disabled: true }),
        'clients.remove': () => storage.clients.remove('c'),
        'users.findOrCreate': () => storage.users.findOrCreate({ identifier: 'i', provider: 'p' }, 'u', NOW),
        'users.find': () => storage.users.find('u'),
        'users.saveClaims': () => storage.users.saveClaims('u', { name: 'U' }),
        'users.findClaims': () => storage.users.findClaims('u'),
        'keys.list': () => storage.keys.list(),
        'keys.save': () =>
          storage.keys.save({
            kid: 'k',
            alg: 'RS256',
            state: 'next',
            publicJwk: '{}',
            sealedPrivateJwk: 'x',
            createdAt: NOW,
            activatedAt: null,
            retiredAt: null,
          }),
        'reader.read': () =>
          storage.reader.read({ client: 'c', ephemeral: ['k'], token: 't', grantOf: 'k' }, NOW),
        'grants.list': () => storage.grants.list({}),
        'grants.save': () => storage.grants.save(grant('g', 'u', 'c')),
        'tokens.save': () => storage.tokens.save(token('t', 'g', 'c', null)),
        'tokens.saveAll': () => storage.tokens.saveAll([token('t', 'g', 'c', null)]),
        'tokens.find': () => storage.tokens.find('t'),
        'usage.add': () =>
          storage.usage.add({
            counts: [{ clientId: 'c', day: '2026-01-01', kind: 'bearer', count: 1 }],
            lastUse: [],
          }),
        'usage.counts': () => storage.usage.counts({ since: '2026-01-01' }),
        'usage.lastUse': () => storage.usage.lastUse({}),
        prune: () => storage.prune(NOW),
      };
      const methods = (
        ['ephemeral', 'clients', 'users', 'grants', 'tokens', 'keys', 'usage', 'reader'] as const
      ).flatMap((domain) =>
        Object.entries(storage[domain])
          .filter(([, value]) => typeof value === 'function')
          .map(([method]) => `${domain}.${method}`),
      );
      expect(Object.keys(calls).sort()).toEqual([...methods, 'prune'].sort());
      for (const [name, call] of Object.entries(calls)) {
        await expect(call(), name).rejects.toBeInstanceOf(StorageUnavailableError);
      }
    } finally {
      await storage.close();
    }
  });
});

/** Every row of every table of the adapter, read over a connection of its own. */
async function everyRow(databaseUrl: string): Promise<unknown[]> {
  const tables = ['oauth_clients', 'oauth_users', 'oauth_grants', 'oauth_tokens', 'oauth_ephemeral'];
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      return tables.flatMap((table) => db.prepare(`select * from ${table}`).all());
    } finally {
      db.close();
    }
  }
  const schema = new URL(databaseUrl).searchParams.get('schema')!;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const rows: unknown[] = [];
    for (const table of tables) rows.push(...(await client.query(`select * from "${schema}".${table}`)).rows);
    return rows;
  } finally {
    await client.end();
  }
}
