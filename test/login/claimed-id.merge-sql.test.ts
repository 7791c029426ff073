/**
 * The SQL of docs/upgrading-claimed-id.md, read from the guide itself and run on the SQL
 * adapter's SQLite tables, then checked through the storage API.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  connectStorage,
  registerClient,
  type GrantRecord,
  type TokenRecord,
  type UserRecord,
} from '../../src/index.js';
import { planClaimedIdMerge } from '../../src/login/openid/claimed-id-merge.js';

const dir = mkdtempSync(join(tmpdir(), 'oob-merge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The guide's SQL block, as statements: the first renames, the others run per merged row. */
function guideStatements(): { rename: string; perMerged: string[] } {
  const guide = readFileSync(new URL('../../docs/upgrading-claimed-id.md', import.meta.url), 'utf8');
  const block = /```sql\n([\s\S]*?)```/.exec(guide)![1]!;
  const statements = block
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
  expect(statements).toHaveLength(5);
  return { rename: statements[0]!, perMerged: statements.slice(1) };
}

const grant = (grantId: string, userId: string, clientId: string): GrantRecord => ({
  grantId,
  userId,
  clientId,
  scopes: ['realms'],
  createdAt: 1,
  updatedAt: 1,
  revokedAt: null,
});
const token = (tokenHash: string, g: GrantRecord): TokenRecord => ({
  tokenHash,
  type: 'access_token',
  grantId: g.grantId,
  clientId: g.clientId,
  userId: g.userId,
  scopes: g.scopes,
  createdAt: 1,
  expiresAt: null,
  origin: 'authorization_code',
  rotatedAt: null,
});

describe('docs/upgrading-claimed-id.md on the SQL adapter (SQLite)', () => {
  it('leaves one user under the normal form, with the grants and tokens of both', async () => {
    const file = join(dir, 'merge.db');
    const storage = await connectStorage(`sqlite:${file}`, { migrate: true });
    for (const clientId of ['c1', 'c2'])
      await registerClient(storage, {
        clientId,
        applicationName: clientId,
        redirectUri: 'https://client.example/cb',
        scopes: ['realms'],
      });
    const provider = 'Example';
    const older = await storage.users.findOrCreate(
      { identifier: 'HTTP://id.example/alice', provider },
      'u1',
      1,
    );
    const newer = await storage.users.findOrCreate(
      { identifier: 'http://id.example/./alice', provider },
      'u2',
      2,
    );
    const kept = grant('g1', 'u1', 'c1');
    const conflicting = grant('g2', 'u2', 'c1');
    const moving = grant('g3', 'u2', 'c2');
    for (const g of [kept, conflicting, moving]) await storage.grants.save(g);
    for (const [hash, g] of [
      ['t1', kept],
      ['t2', conflicting],
      ['t3', moving],
    ] as const)
      await storage.tokens.save(token(hash, g));
    await storage.close();

    const db = new Database(file);
    const rows = db
      .prepare('SELECT id, identifier, provider, created_at AS createdAt FROM oauth_users')
      .all() as UserRecord[];
    const plan = planClaimedIdMerge(rows);
    expect(plan).toEqual([
      { provider, identifier: 'http://id.example/alice', keep: older, rename: true, merge: [newer] },
    ]);
    const { rename, perMerged } = guideStatements();
    for (const step of plan) {
      db.transaction(() => {
        if (step.rename) db.prepare(rename).run({ keep: step.keep.id, identifier: step.identifier });
        for (const merged of step.merge)
          for (const statement of perMerged) {
            const names = new Set([...statement.matchAll(/:(\w+)/g)].map((m) => m[1]!));
            const values: Record<string, unknown> = { keep: step.keep.id, merged: merged.id, now: 1000 };
            db.prepare(statement).run(Object.fromEntries([...names].map((n) => [n, values[n]])));
          }
      })();
    }
    db.close();

    const after = await connectStorage(`sqlite:${file}`);
    try {
      const login = await after.users.findOrCreate(
        { identifier: 'http://id.example/alice', provider },
        'new',
        3,
      );
      expect(login.id).toBe('u1');
      expect((await after.grants.list({ userId: 'u1' })).map((g) => [g.grantId, g.revokedAt])).toEqual([
        ['g1', null],
        ['g3', null],
      ]);
      expect((await after.grants.list({ userId: 'u2' })).map((g) => [g.grantId, g.revokedAt])).toEqual([
        ['g2', 1000],
      ]);
      expect((await after.tokens.find('t3'))?.token.userId).toBe('u1');
      expect((await after.tokens.find('t2'))?.grant?.revokedAt).toBe(1000);
      expect((await after.tokens.find('t1'))?.grant?.revokedAt).toBeNull();
      // Kept while its revoked grant is: step d deletes it after prune.
      expect(await after.users.find?.('u2')).not.toBeNull();
    } finally {
      await after.close();
    }
  });
});
