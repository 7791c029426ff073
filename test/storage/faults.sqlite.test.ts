/**
 * SQLite with another process holding the write lock (`BEGIN EXCLUSIVE` on a second connection,
 * as a backup or a migration in another process would): writes wait `busyTimeoutMs`, then answer
 * 503 (SQLITE_BUSY), not 500; reads go on (WAL); once the lock is gone, writes resume.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { type SqlStorage } from '../../src/storage/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { api, exchange, expectTokenUnavailable, seedCode, seedTokens } from '../support/faults.js';

describe('SQLite busy', () => {
  let dir: string;
  let storage: SqlStorage;
  let t: TestApp;
  const warnings: unknown[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'oob-busy-'));
    storage = await connectStorage(`sqlite:${join(dir, 'oauth.db')}`, { migrate: true, busyTimeoutMs: 200 });
    t = await createTestApp({
      storage,
      logger: { warn: (_m, details) => warnings.push(details), error: () => {} },
    });
  });

  afterAll(async () => {
    await t?.close();
    await storage?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 after busyTimeoutMs while another connection holds the write lock', async () => {
    const { accessToken } = await seedTokens(t);
    const code = await seedCode(t);
    const other = new Database(join(dir, 'oauth.db'));
    try {
      other.exec('BEGIN EXCLUSIVE');
      expectTokenUnavailable(await exchange(t, code), 2000);
      const cause = (warnings.at(-1) as { error: { cause: { code: string } } }).error.cause;
      expect(cause.code).toMatch(/^SQLITE_BUSY/);
      // WAL: readers are not blocked by the writer.
      expect((await api(t, accessToken)).res.status).toBe(200);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    const exchanged = await exchange(t, code);
    expect(exchanged.res.status, exchanged.text).toBe(200);
  });
});
