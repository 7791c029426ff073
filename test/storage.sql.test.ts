/**
 * What the SQL adapter promises beyond the storage contract (which the conformance kit checks):
 * migrations safe to repeat and to race, batched pruning safe to race, hashes only at rest, and
 * the database URLs of the demo and CLI.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { connectStorage, migrations, sqlStorage } from '../src/index.js';
import { createTestApp } from './support/app.js';
import { POSTGRES_URL, sqlEngines, uniqueSchema } from './support/databases.js';
import { exchangeCode, obtainCode } from './support/flow.js';

const sql = await sqlEngines('sql');
const { engines, postgres, dir } = sql;
afterAll(sql.cleanup);

describe.each(engines)('SQL adapter on $name', ({ skip, url }) => {
  const test = it.skipIf(skip !== null);
  const suffix = skip === null ? '' : ` (${skip})`;

  test(`migrates once, and a second run does nothing${suffix}`, async () => {
    const storage = await connectStorage(url());
    try {
      expect(await storage.migrate()).toEqual(Object.keys(migrations));
      expect(await storage.migrate()).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  test(`migrates from two instances at once without failing or running twice${suffix}`, async () => {
    const databaseUrl = url();
    const [first, second] = await Promise.all([connectStorage(databaseUrl), connectStorage(databaseUrl)]);
    try {
      const ran = await Promise.all([first.migrate(), second.migrate()]);
      expect(ran.flat()).toEqual(Object.keys(migrations));
      await first.nonces.use('op', 'n', Date.now() + 1000);
      expect(await second.nonces.use('op', 'n', Date.now() + 1000)).toBe(false);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test(`prunes in batches, from two instances at once, and keeps what is live${suffix}`, async () => {
    const databaseUrl = url();
    const storage = await connectStorage(databaseUrl, { migrate: true });
    const other = await connectStorage(databaseUrl);
    try {
      const now = 1_700_000_000_000;
      for (let i = 0; i < 2500; i++) await storage.nonces.use('op', `old-${i}`, now - 1);
      for (let i = 0; i < 10; i++) await storage.nonces.use('op', `live-${i}`, now + 60_000);
      await storage.sessions.set('expired', '{}', now);
      await storage.sessions.set('live', '{}', now + 1);

      const results = await Promise.all([
        storage.prune(now, { batchSize: 300 }),
        other.prune(now, { batchSize: 300 }),
      ]);
      expect(results[0]!.nonces + results[1]!.nonces).toBe(2500);
      expect(results[0]!.sessions + results[1]!.sessions).toBe(1);
      expect(await storage.nonces.use('op', 'live-3', now + 60_000)).toBe(false);
      expect(await storage.sessions.get('live', now)).toBe('{}');
      await expect(storage.prune(now, { batchSize: 0 })).rejects.toThrow(/batchSize/);
    } finally {
      await Promise.all([storage.close(), other.close()]);
    }
  });

  test(`counts rate-limit failures atomically, in fixed windows${suffix}`, async () => {
    const storage = await connectStorage(url(), { migrate: true });
    try {
      const now = 1_700_000_000_000;
      const counts = await Promise.all(
        Array.from({ length: 30 }, () => storage.rateLimits.increment('client:x', 60_000, now)),
      );
      expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 30 }, (_, i) => i + 1),
      );
      expect(new Set(counts.map((c) => c.resetAt))).toEqual(new Set([now + 60_000]));
      expect(await storage.rateLimits.get('client:x', now)).toEqual({ count: 30, resetAt: now + 60_000 });
      expect(await storage.rateLimits.get('client:x', now + 60_000)).toBeNull();
      expect(await storage.rateLimits.increment('client:x', 60_000, now + 60_000)).toEqual({
        count: 1,
        resetAt: now + 120_000,
      });
      await storage.rateLimits.reset('client:x');
      expect(await storage.rateLimits.get('client:x', now)).toBeNull();
      await storage.rateLimits.increment('address:y', 1000, now);
      expect((await storage.prune(now + 1000)).rateLimits).toBe(1);
    } finally {
      await storage.close();
    }
  });

  test(`keeps a client's PKCE requirement${suffix}`, async () => {
    const storage = await connectStorage(url(), { migrate: true });
    try {
      const client = {
        clientId: 'native',
        applicationName: 'Native',
        redirectUri: 'https://native.example/cb',
        grantType: 'authorization_code' as const,
        secretHash: 'h',
        scopes: [],
        disabled: false,
        createdAt: 1,
      };
      await storage.clients.create({ ...client, requirePkce: true });
      expect((await storage.clients.find('native'))?.requirePkce).toBe(true);
      await storage.clients.update('native', { requirePkce: false });
      expect((await storage.clients.find('native'))?.requirePkce).toBeUndefined();
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
    expect(tables.rows.map((row: { table_name: string }) => row.table_name)).toContain('oauth_access_tokens');
    await storage.close();
  });

  it.skipIf(!postgres.ok)(
    'reports an unreachable PostgreSQL as an error, within the connection timeout',
    async () => {
      const storage = await connectStorage('postgres://root@127.0.0.1:1/test', { connectionTimeoutMs: 1000 });
      await expect(storage.clients.find('x')).rejects.toThrow();
      await storage.close();
    },
  );
});

/** Every row of every table of the adapter, read over a connection of its own. */
async function everyRow(databaseUrl: string): Promise<unknown[]> {
  const tables = [
    'oauth_clients',
    'oauth_users',
    'oauth_consents',
    'oauth_codes',
    'oauth_access_tokens',
    'oauth_refresh_tokens',
    'oauth_revoked_grants',
    'oauth_nonces',
    'oauth_sessions',
  ];
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
