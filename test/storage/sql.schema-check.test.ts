/**
 * connectStorage without `migrate` refuses a database whose schema is not up to date before
 * anything is served, saying what to run (issue 38, item 5): it used to connect, create the
 * SQLite file and its folder, and leave every request to fail with the driver's `no such table`.
 * Real SQLite files in a temporary folder, and a fresh PostgreSQL schema where it runs.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { connectStorage, DatabaseError } from '../../src/index.js';
import { migrations } from '../../src/storage/sql/migrations.js';
import { itOn, sqlEngines } from '../support/databases.js';

const sql = await sqlEngines('schema-check');
afterAll(sql.cleanup);

const WHAT_TO_DO =
  "run: npx openid-oauth-bridge migrate with this database's URL (--database-url or DATABASE_URL), or connect with connectStorage(url, { migrate: true })";
const LAST = Object.keys(migrations).sort().at(-1)!;

/** What connectStorage rejected with (fails the test if it resolved). */
async function refusal(url: string): Promise<DatabaseError> {
  const outcome = await connectStorage(url).then(
    async (storage) => {
      await storage.close();
      return undefined;
    },
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(DatabaseError);
  return outcome as DatabaseError;
}

describe.each(sql.engines)('connectStorage without migrate on $name', (engine) => {
  const test = itOn(engine);

  test('refuses a database that was never migrated, naming both ways to migrate', async () => {
    const url = engine.url();
    // Opened as it is, as the CLI's migrate does: an empty database (a SQLite file that exists).
    await (await connectStorage(url, { checkSchema: false })).close();
    const err = await refusal(url);
    expect(err.failure).toBe('not_migrated');
    expect(err.message).toContain('the schema is not set up');
    expect(err.message).toContain(WHAT_TO_DO);
    expect(err.message).not.toMatch(/^no such table|^relation .* does not exist/);
    // Once migrated, the same call resolves.
    await (await connectStorage(url, { migrate: true })).close();
    await (await connectStorage(url)).close();
  });

  test('refuses a database a later migration has not run on, naming it', async () => {
    const url = engine.url();
    const storage = await connectStorage(url, { migrate: true });
    await storage.close();
    // As a database migrated by an earlier release, once a release adds a migration: one more in
    // the package than the database has run (added here for the test, and taken out after it).
    const later = `${LAST.slice(0, 3).replace(/\d+/, (n) => String(Number(n) + 1).padStart(3, '0'))}-later`;
    migrations[later] = { up: async () => undefined };
    try {
      const err = await refusal(url);
      expect(err.failure).toBe('not_migrated');
      expect(err.message).toContain(`the schema is not up to date (not yet run: ${later})`);
      expect(err.message).toContain(WHAT_TO_DO);
    } finally {
      delete migrations[later];
    }
  });
});

describe('connectStorage without migrate on a SQLite file that does not exist', () => {
  itOn(sql.engines[0]!)('refuses it, creating neither the file nor its folder', async () => {
    const file = join(sql.dir, 'missing-folder', 'deeper', 'oauth.db');
    const err = await refusal(`sqlite:${file}`);
    expect(err.failure).toBe('not_migrated');
    expect(err.message).toBe(
      `openid-oauth-bridge: SQLite database sqlite:${file}: the file does not exist, so the schema is not set up; ` +
        `${WHAT_TO_DO} (the file is ${resolve(file)}: is it the one you meant?)`,
    );
    expect(existsSync(file)).toBe(false);
    expect(existsSync(join(sql.dir, 'missing-folder'))).toBe(false);
  });
});
