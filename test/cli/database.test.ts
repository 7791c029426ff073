/**
 * The CLI's database commands, run as real processes against SQLite and PostgreSQL.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { migrations } from '../../src/storage/sql/migrations.js';
import { runCli } from '../support/cli.js';
import { sqlEngines } from '../support/databases.js';

const sql = await sqlEngines('cli');
const { engines } = sql;
afterAll(sql.cleanup);

describe.each(engines)('openid-oauth-bridge migrate and prune on $name', ({ skip, url }) => {
  const test = it.skipIf(skip !== null);
  const suffix = skip === null ? '' : ` (${skip})`;

  test(`migrate applies the schema once, then reports it up to date${suffix}`, async () => {
    const databaseUrl = url();
    const first = await runCli(['migrate', '--json'], { DATABASE_URL: databaseUrl });
    expect(first, `stderr: ${first.stderr}`).toMatchObject({
      code: 0,
      stderr: `database: ${databaseUrl} (from DATABASE_URL)\n`,
    });
    expect(JSON.parse(first.stdout)).toEqual({ applied: Object.keys(migrations) });
    const second = await runCli(['--database-url', databaseUrl, 'migrate']);
    expect(second, `stderr: ${second.stderr}`).toMatchObject({
      code: 0,
      stdout: 'The schema is up to date.\n',
    });
  });

  test(`prune removes expired rows and keeps live ones${suffix}`, async () => {
    const databaseUrl = url();
    const storage = await connectStorage(databaseUrl, { migrate: true });
    const now = Date.now();
    const ephemeral = storage.ephemeral;
    // Written while they were live, expired by the time prune runs.
    await ephemeral.set('nonce:stale', '1', now - 1000, now - 2000);
    await ephemeral.set('session:old', '{}', now - 1000, now - 2000);
    expect(await ephemeral.add('nonce:fresh', '1', now + 60_000, now)).toBe(true);
    const result = await runCli(['--database-url', databaseUrl, '--json', 'prune', '--batch-size', '1']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).removed).toEqual({
      ephemeral: 2,
      tokens: 0,
      grants: 0,
      clients: 0,
      usage: 0,
    });
    expect(await ephemeral.add('nonce:fresh', '1', now + 60_000, now)).toBe(false);
    await storage.close();
  });
});

describe('openid-oauth-bridge errors', () => {
  it('answers a wrong argument with one line and exit code 1, no stack trace', async () => {
    const result = await runCli(['prune', '--batch-size', 'many']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: option '--batch-size <n>' argument 'many' is invalid/);
    expect(result.stderr).not.toMatch(/\bat .*\.(ts|js):\d+/);
  });

  it('answers an unknown database URL with one line, without the password', async () => {
    const result = await runCli(['--database-url', 'mysql://admin:s3cret@db/x', 'migrate']);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toBe(
      'database: mysql://admin:***@db/x (from --database-url)\n' +
        'error: database URL must start with sqlite: or postgres:// (got "mysql://admin:***@db/x")\n',
    );
  });

  it('answers an unknown command and prints help on --help', async () => {
    expect((await runCli(['frobnicate'])).code).toBe(1);
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('migrate');
    expect(help.stdout).toContain('prune');
  });
});
