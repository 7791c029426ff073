/**
 * The CLI's side of the client credentials grant (issue 42): `clients add --grant
 * client_credentials` registers a confidential client without a redirect URI and prints its secret
 * once (`--json`: its id and secret); a public one, one with a redirect URI, a change of grant and
 * a transfer to a member are refused. Run in-process on a real SQLite file; the effect on tokens
 * (disable, remove) is proven against the demo (test/examples/demo.client-credentials.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { connectStorage } from '../../src/storage/sql/connect.js';

const dir = mkdtempSync(join(tmpdir(), 'oob-cli-bot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let url: string;
let run = 0;
beforeEach(async () => {
  url = `sqlite:${join(dir, `bot-${++run}.db`)}`;
  await (await connectStorage(url, { migrate: true })).close();
});

/** Runs one command; resolves what it printed and its error. */
async function cli(...args: string[]) {
  let out = '';
  const program = createProgram({ out: (text) => (out += text), err: () => {} }, {});
  const error = await program
    .parseAsync(['node', 'openid-oauth-bridge', '--database-url', url, ...args])
    .then(
      () => null,
      (failure: Error) => failure.message,
    );
  return { out, error };
}

const add = (...extra: string[]) =>
  cli(
    'clients',
    'add',
    '--name',
    'Stats crawler',
    '--grant',
    'client_credentials',
    '--scope',
    'realms',
    ...extra,
  );

it('adds a confidential client without a redirect URI and prints its secret once', async () => {
  const text = await add('--client-id', 'stats-bot');
  expect(text.error).toBeNull();
  expect(text.out).toMatch(
    /^client_id {6}stats-bot\nclient_secret {2}[A-Za-z0-9_-]{43}\n\nThe secret is shown this once only/,
  );
  const json = await cli(
    '--json',
    'clients',
    'add',
    '--name',
    'Job',
    '--grant',
    'client_credentials',
    '--scope',
    'realms',
  );
  expect(JSON.parse(json.out)).toMatchObject({
    client_id: expect.any(String),
    client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    grant_type: 'client_credentials',
    redirect_uri: '',
    public: false,
  });
  const shown = await cli('clients', 'show', 'stats-bot');
  expect(shown.out).toContain('redirect_uri      (none: acts as itself)');
  expect(shown.out).toContain('grant             client_credentials');
  expect(shown.out).toContain('client type       confidential (has a secret)');
});

it('refuses a public one, a redirect URI, a change of grant and a transfer to a member', async () => {
  expect((await add('--public')).error).toContain('cannot be public');
  expect((await add('--redirect-uri', 'https://bot.example/cb')).error).toContain('has no redirect URI');
  expect((await add('--client-id', 'stats-bot')).error).toBeNull();
  expect(
    (
      await cli(
        'clients',
        'update',
        'stats-bot',
        '--grant',
        'code',
        '--redirect-uri',
        'https://bot.example/cb',
      )
    ).error,
  ).toContain('register a new client');
  expect((await cli('clients', 'transfer', 'stats-bot', '--to', 'member-1')).error).toContain(
    'cannot be given to a member',
  );
  // Its secret rotates as any confidential client's.
  const rotated = await cli('--json', 'clients', 'rotate-secret', 'stats-bot');
  expect(JSON.parse(rotated.out)).toMatchObject({ client_secret: expect.any(String) });
});
