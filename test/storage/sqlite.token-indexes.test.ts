/**
 * The tables keep only the indexes the adapter's own statements need, since each one costs every
 * insert: the token table none besides its primary key. Whatever the adapter reads by key,
 * client, grant, revocation or expiry must still find an index: SQLite's plan for each statement
 * it runs searches, never scans.
 */
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { sqlStorage } from '../../src/storage/index.js';

const indexesOf = (database: Database.Database, table: string) =>
  (
    database
      .prepare("select name from sqlite_master where type = 'index' and tbl_name = ? order by name")
      .all(table) as { name: string }[]
  ).map((row) => row.name);

it('every statement of the contract and of prune searches its tables by index', async () => {
  const ran: string[] = [];
  // better-sqlite3 reports each statement it runs, with its parameters filled in.
  const database = new Database(':memory:', { verbose: (text) => ran.push(String(text)) });
  const storage = sqlStorage({ sqlite: database });
  const now = Date.now();
  try {
    await storage.migrate();
    ran.length = 0;
    const e = storage.ephemeral;
    await e.set('k', 'v', now + 1, now);
    await e.get('k', now);
    await e.add('k', 'v', now + 1, now);
    await e.take('k', now);
    await e.increment('n', now + 1, now);
    await e.delete('n');
    await e.prune(now);
    await storage.clients.find('client');
    await storage.users.findOrCreate({ provider: 'op', identifier: 'alice' }, 'user', now);
    await storage.users.find('user');
    await storage.grants.list({ userId: 'user', clientId: 'client' });
    await storage.grants.list({ userId: 'user' });
    await storage.grants.list({ clientId: 'client' });
    await storage.grants.save({
      grantId: 'g',
      userId: 'user',
      clientId: 'client',
      scopes: [],
      createdAt: now,
      updatedAt: now,
      revokedAt: null,
    });
    await storage.tokens.save({
      tokenHash: 't',
      type: 'access_token',
      grantId: 'g',
      clientId: 'client',
      userId: 'user',
      scopes: [],
      createdAt: now,
      expiresAt: now + 1,
      origin: 'authorization_code',
      rotatedAt: null,
    });
    await storage.tokens.find('t');
    await storage.prune(now, { batchSize: 1 });
    await storage.clients.remove('client');

    const statements = ran.filter((text) => /oauth_/.test(text) && !/^(begin|commit)/i.test(text));
    const plans = statements.map((text) => ({
      text,
      steps: (database.prepare(`explain query plan ${text}`).all() as { detail: string }[]).map(
        (row) => row.detail,
      ),
    }));
    expect(plans.filter((plan) => plan.steps.some((step) => step.startsWith('SCAN')))).toEqual([]);
    const steps = plans.flatMap((plan) => plan.steps);
    for (const index of ['oauth_ephemeral_expires_at', 'oauth_grants_client_id', 'oauth_grants_revoked_at']) {
      expect(steps.some((step) => step.includes(`INDEX ${index} (`))).toBe(true);
    }
    // tokens.find: one statement, by the token's key, its grant's unique grant_id and its client's key.
    const find = plans.find((plan) => / left join /.test(plan.text));
    expect(find?.steps).toEqual([
      expect.stringMatching(/^SEARCH t USING INDEX sqlite_autoindex_oauth_tokens_1 \(token_hash=\?\)$/),
      expect.stringMatching(/^SEARCH g USING INDEX sqlite_autoindex_oauth_grants_\d \(grant_id=\?\)/),
      expect.stringMatching(/^SEARCH c USING INDEX sqlite_autoindex_oauth_clients_1 \(client_id=\?\)/),
    ]);
  } finally {
    await storage.close();
  }
});

it('leaves the token table with its primary key only, once 005 has replaced the token tables of 004', async () => {
  const database = new Database(':memory:');
  const storage = sqlStorage({ sqlite: database });
  try {
    await storage.migrate();
    expect(indexesOf(database, 'oauth_tokens')).toEqual(['sqlite_autoindex_oauth_tokens_1']);
    expect(indexesOf(database, 'oauth_grants')).toEqual([
      'oauth_grants_client_id',
      'oauth_grants_revoked_at',
      'sqlite_autoindex_oauth_grants_1',
      'sqlite_autoindex_oauth_grants_2',
    ]);
    expect(indexesOf(database, 'oauth_ephemeral')).toEqual([
      'oauth_ephemeral_expires_at',
      'sqlite_autoindex_oauth_ephemeral_1',
    ]);
  } finally {
    await storage.close();
  }
});
