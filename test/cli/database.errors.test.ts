/**
 * The CLI names the database it uses, refuses to guess one, never migrates unless asked, and turns
 * database failures into one line naming the database and the cause, with the exit codes its
 * `--help` documents. Real processes; PostgreSQL where it runs (required under CI).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { runCli } from '../support/cli.js';
import { POSTGRES_URL, postgresAvailability } from '../support/databases.js';

vi.setConfig({ testTimeout: 60_000 });
const dir = mkdtempSync(join(tmpdir(), 'oob-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const postgres = await postgresAvailability();

/** A run with no DATABASE_URL from the environment unless given. */
const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { DATABASE_URL: '', ...env });

describe('openid-oauth-bridge and its database', () => {
  it('refuses without a database named, saying how to name one (was: silently .data/demo.db)', async () => {
    const result = await cli(['clients', 'list']);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'error: no database named: pass --database-url sqlite:./path/to/oauth.db (or postgres://user@host:5432/db), or set DATABASE_URL. (The demo, npm run demo, uses sqlite:./.data/demo.db.)\n',
    });
  });

  it('names the database it uses, and where the name came from', async () => {
    const url = `sqlite:${join(dir, 'named.db')}`;
    await cli(['--database-url', url, 'migrate']);
    expect((await cli(['clients', 'list'], { DATABASE_URL: url })).stderr).toBe(
      `database: ${url} (from DATABASE_URL)\n`,
    );
    expect((await cli(['--database-url', url, 'clients', 'list'])).stderr).toBe(
      `database: ${url} (from --database-url)\n`,
    );
  });

  it('never migrates in a read-only command, nor in a write without --migrate', async () => {
    const url = `sqlite:${join(dir, 'fresh.db')}`;
    const list = await cli(['--database-url', url, 'clients', 'list']);
    expect(list.code).toBe(3);
    expect(list.stderr).toBe(
      `database: ${url} (from --database-url)\n` +
        `error: SQLite database ${url}: the file does not exist, so the schema is not set up; run: npx openid-oauth-bridge migrate with this database's URL (--database-url or DATABASE_URL), or connect with connectStorage(url, { migrate: true }) (the file is ${join(dir, 'fresh.db')}: is it the one you meant?)\n`,
    );
    // Nor is the file created by a command that does not migrate.
    expect(existsSync(join(dir, 'fresh.db'))).toBe(false);
    const add = [
      'clients',
      'add',
      '--name',
      'A',
      '--redirect-uri',
      'https://a.example/cb',
      '--scope',
      'realms',
    ];
    expect((await cli(['--database-url', url, ...add])).code).toBe(3);
    // Still not migrated: the failed commands left the schema alone.
    expect((await cli(['--database-url', url, 'grants', 'list'])).code).toBe(3);
    const migrated = await cli(['--database-url', url, ...add, '--migrate']);
    expect(migrated.code).toBe(0);
    expect((await cli(['--database-url', url, '--json', 'clients', 'list'])).code).toBe(0);
  });

  it('says a client_id is taken, naming the database (was: UNIQUE constraint failed)', async () => {
    const url = `sqlite:${join(dir, 'taken.db')}`;
    const add = [
      '--database-url',
      url,
      'clients',
      'add',
      '--migrate',
      '--client-id',
      'printer',
      '--name',
      'Printer',
      '--redirect-uri',
      'https://printer.example/cb',
      '--scope',
      'realms',
    ];
    expect((await cli(add)).code).toBe(0);
    const again = await cli(add);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      `error: client_id printer is already registered in ${url}: choose another --client-id, or change that client with: clients update printer\n`,
    );
  });

  it('says a SQLite file cannot be opened', async () => {
    writeFileSync(join(dir, 'a-file'), '');
    const url = `sqlite:${join(dir, 'a-file', 'x.db')}`;
    const result = await cli(['--database-url', url, 'clients', 'list']);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      /^error: SQLite database .*: cannot open the file \(.*\); check that its folder exists and is writable$/m,
    );
  });

  it('says PostgreSQL is unreachable (was: "migration  failed: connect ECONNREFUSED")', async () => {
    const result = await cli([
      '--database-url',
      'postgres://oauth:s3cret@127.0.0.1:1/oauth',
      'clients',
      'list',
    ]);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      'database: postgres://oauth:***@127.0.0.1:1/oauth (from --database-url)\n' +
        "error: PostgreSQL database postgres://oauth:***@127.0.0.1:1/oauth: unreachable (ECONNREFUSED); check that the server runs and the URL's host and port\n",
    );
    await expect(connectStorage('postgres://oauth@127.0.0.1:1/oauth', { migrate: true })).rejects.toThrow(
      /^openid-oauth-bridge: PostgreSQL database postgres:\/\/oauth@127\.0\.0\.1:1\/oauth: unreachable \(ECONNREFUSED\)/,
    );
  });

  it.skipIf(!postgres.ok)(
    `says PostgreSQL refused the login, or has no such database${postgres.ok ? '' : ' (PostgreSQL not running)'}`,
    async () => {
      const url = new URL(POSTGRES_URL);
      url.username = 'no_such_role_oob';
      url.password = 'pw';
      const login = await cli(['--database-url', url.href, 'migrate']);
      expect(login.code).toBe(3);
      expect(login.stderr).toMatch(
        /^error: PostgreSQL database postgres:\/\/no_such_role_oob:\*\*\*@.*: authentication failed \(.*no_such_role_oob.*\); check the user and password in the URL$/m,
      );
      expect(login.stderr).not.toContain('migration');
      const missing = new URL(POSTGRES_URL);
      missing.pathname = '/no_such_database_oob';
      const database = await cli(['--database-url', missing.href, 'clients', 'list']);
      expect(database.code).toBe(3);
      expect(database.stderr).toContain(
        'database "no_such_database_oob" does not exist; create it, or fix the database name in the URL',
      );
    },
  );

  it('never shows a password: query parameters, DATABASE_URL, a URL that does not parse (issue 29, CWE-532)', async () => {
    const secret = 'Hunter2-s3cret';
    const inQuery = `postgres://oauth@127.0.0.1:1/oauth?password=${secret}&sslpassword=${secret}&sslmode=disable`;
    const fromEnv = await cli(['clients', 'list'], { DATABASE_URL: inQuery });
    expect(fromEnv.code).toBe(3);
    expect(fromEnv.stderr).not.toContain(secret);
    expect(fromEnv.stderr).toContain(
      'database: postgres://oauth@127.0.0.1:1/oauth?password=***&sslpassword=***&sslmode=disable (from DATABASE_URL)',
    );
    // An unencoded '#' or '/' in the password: the URL does not parse, only its scheme is shown.
    for (const broken of [
      `postgres://oauth:${secret}#x@127.0.0.1:1/oauth`,
      `postgres://oauth:12/${secret}@127.0.0.1:1/oauth`,
    ]) {
      const result = await cli(['--database-url', broken, 'clients', 'list']);
      expect(result.code).toBeGreaterThan(0);
      expect(result.stderr).not.toContain(secret);
      expect(result.stderr).toContain('database: postgres://… (from --database-url)');
    }
    // connectStorage's errors, which host apps log.
    const failed = await connectStorage(inQuery, { migrate: true }).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(failed?.message).toContain('postgres://oauth@127.0.0.1:1/oauth?password=***');
    expect(failed?.message).not.toContain(secret);
  });

  it('connectStorage without a URL says to set DATABASE_URL (was: reading startsWith of undefined)', async () => {
    await expect(connectStorage(process.env.SURELY_UNSET_DATABASE_URL!)).rejects.toThrow(
      'openid-oauth-bridge: connectStorage needs a database URL (got undefined); set DATABASE_URL, e.g. DATABASE_URL=sqlite:./.data/oauth.db or DATABASE_URL=postgres://user@localhost:5432/oauth',
    );
  });

  it('documents its exit codes in --help', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit codes:');
    expect(help.stdout).toMatch(/^ {2}2 {2}no database named/m);
    expect(help.stdout).toMatch(/^ {2}3 {2}the database failed/m);
  });
});
