/**
 * The token tables keep only the indexes the adapter's own statements need, since each one costs
 * every token insert. Whatever reads them by user, client, grant or expiry must still find an
 * index: SQLite's plan for each such statement the adapter runs searches, never scans.
 */
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { Kysely, SqliteDialect } from 'kysely';
import { migrations, sqlStorage } from '../src/index.js';

it('prune, client removal, consent listing and revoke-by-user-and-client search the token tables by index', async () => {
  const ran: string[] = [];
  // better-sqlite3 reports each statement it runs, with its parameters filled in.
  const database = new Database(':memory:', { verbose: (text) => ran.push(String(text)) });
  const storage = sqlStorage({ sqlite: database });
  try {
    await storage.migrate();
    ran.length = 0;
    await storage.prune(Date.now());
    await storage.clients.remove('client');
    await storage.consents.list({ userId: 'user' });
    await storage.tokens.revokeForUserAndClient('user', 'client', Date.now());

    const steps = ran
      .filter((text) => /oauth_(access|refresh)_tokens/.test(text))
      .flatMap((text) => database.prepare(`explain query plan ${text}`).all() as { detail: string }[])
      .map((row) => row.detail);
    expect(steps.filter((step) => step.startsWith('SCAN'))).toEqual([]);
    for (const index of [
      'oauth_access_tokens_expires_at',
      'oauth_refresh_tokens_expires_at_set',
      'oauth_access_tokens_grant_id',
      'oauth_refresh_tokens_grant_id',
      'oauth_access_tokens_client_user',
      'oauth_refresh_tokens_client_user',
    ]) {
      expect(steps.some((step) => step.includes(`USING INDEX ${index} (`))).toBe(true);
    }
  } finally {
    await storage.close();
  }
});

it('migration 004 swaps the token indexes on the way up, and puts the old ones back on the way down', async () => {
  const database = new Database(':memory:');
  const storage = sqlStorage({ sqlite: database });
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database }) });
  const tokenIndexes = () =>
    (
      database
        .prepare(
          "select name from sqlite_master where type = 'index' and tbl_name like 'oauth_%_tokens' and name not like 'sqlite_autoindex%' order by name",
        )
        .all() as { name: string }[]
    ).map((row) => row.name);
  const after = [
    'oauth_access_tokens_client_user',
    'oauth_access_tokens_expires_at',
    'oauth_access_tokens_grant_id',
    'oauth_refresh_tokens_client_user',
    'oauth_refresh_tokens_expires_at_set',
    'oauth_refresh_tokens_grant_id',
  ];
  const before = [
    'oauth_access_tokens_client_id',
    'oauth_access_tokens_expires_at',
    'oauth_access_tokens_grant_id',
    'oauth_access_tokens_user_client',
    'oauth_refresh_tokens_client_id',
    'oauth_refresh_tokens_expires_at',
    'oauth_refresh_tokens_grant_id',
    'oauth_refresh_tokens_user_client',
  ];
  try {
    await storage.migrate();
    expect(tokenIndexes()).toEqual(after);
    const migration = migrations['2026-11-21-004-fewer-token-indexes']!;
    await migration.down!(db);
    expect(tokenIndexes()).toEqual(before);
    await migration.up(db);
    expect(tokenIndexes()).toEqual(after);
  } finally {
    await storage.close();
  }
});
