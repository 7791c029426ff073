/**
 * `grants list --user` and `grants revoke --user` take the same identifiers, a user id or the
 * identifier the user logged in with; `grants revoke --user` without `--client` revokes every
 * grant of the user, and only with `--yes` outside a terminal (issue 38). The CLI runs as a real
 * process on the database a running app uses (SQLite and PostgreSQL).
 */
import supertest from 'supertest';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { connectStorage, registerClient } from '../../src/index.js';
import { CODE_REDIRECT, createTestApp } from '../support/app.js';
import { runCli } from '../support/cli.js';
import { sqlEngines } from '../support/databases.js';
import { exchangeCode, obtainCode } from '../support/flow.js';

vi.setConfig({ testTimeout: 90_000 });

const sql = await sqlEngines('cli_grants');
afterAll(sql.cleanup);

interface GrantRow {
  user_id: string;
  user_identifier: string;
  client_id: string;
}

describe.each(sql.engines)('openid-oauth-bridge grants --user on $name', ({ skip, url }) => {
  const test = it.skipIf(skip !== null);
  const suffix = skip === null ? '' : ` (${skip})`;

  test(`lists and revokes by user id or identifier; every grant of a user with --yes${suffix}`, async () => {
    const databaseUrl = url();
    const storage = await connectStorage(databaseUrl, { migrate: true });
    const t = await createTestApp({ storage });
    const cli = (...args: string[]) => runCli(['--database-url', databaseUrl, ...args]);
    const list = async (...args: string[]) =>
      JSON.parse((await cli('--json', 'grants', 'list', ...args)).stdout) as GrantRow[];
    try {
      await registerClient(storage, {
        clientId: 'other-client',
        applicationName: 'Other',
        redirectUri: CODE_REDIRECT,
        scopes: ['realms'],
      });
      const { code } = await obtainCode(t);
      const alice = (await exchangeCode(t, code)).body as { access_token: string };
      // Each authorization in a browser of its own (a signed-in browser skips the provider).
      const browser = () => ({ ...t, agent: supertest.agent(t.baseUrl) });
      await obtainCode(browser(), { client_id: 'other-client' });
      await obtainCode(browser(), {}, 'bob');

      const all = await list();
      expect(all).toHaveLength(3);
      const aliceRow = all.find((row) => row.user_identifier.includes('alice'))!;
      const byIdentifier = await list('--user', aliceRow.user_identifier);
      const byId = await list('--user', aliceRow.user_id);
      expect(byIdentifier.map((row) => row.client_id).sort()).toEqual(['code-client', 'other-client']);
      expect(byId).toEqual(byIdentifier);
      expect(await list('--user', aliceRow.user_identifier, '--client', 'other-client')).toHaveLength(1);

      // Every grant of the user: not without --yes outside a terminal, and nothing is changed.
      const unconfirmed = await cli('grants', 'revoke', '--user', aliceRow.user_identifier);
      expect(unconfirmed.code).toBe(1);
      expect(unconfirmed.stderr).toContain(
        `error: revoking every grant of user ${aliceRow.user_id} (code-client, other-client) needs --yes, or --client to revoke one; nothing was changed\n`,
      );
      expect(await list('--user', aliceRow.user_id)).toHaveLength(2);

      const revoked = await cli('--json', 'grants', 'revoke', '--user', aliceRow.user_identifier, '--yes');
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(JSON.parse(revoked.stdout)).toEqual({
        user_id: aliceRow.user_id,
        client_ids: ['code-client', 'other-client'],
        revoked: true,
      });
      expect(await list('--user', aliceRow.user_identifier)).toEqual([]);
      // Bob's grant stands; Alice's tokens stop at once.
      expect((await list()).map((row) => row.user_identifier)).toEqual([
        all.find((row) => row.user_identifier.includes('bob'))!.user_identifier,
      ]);
      expect(
        (await t.agent.get('/v1/realms').set('Authorization', `Bearer ${alice.access_token}`)).status,
      ).toBe(401);
      const again = await cli('grants', 'revoke', '--user', aliceRow.user_id, '--yes');
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`error: user ${aliceRow.user_id} has no grants (see: grants list)\n`);
    } finally {
      await t.close();
      await storage.close();
    }
  });

  test(`--help says what each command needs${suffix}`, async () => {
    const help = async (command: string) =>
      (await runCli(['grants', command, '--help'])).stdout.replace(/\s+/g, ' ');
    const revoke = await help('revoke');
    expect(revoke).toContain('Needs --user; with --client, that one grant; without, every grant of the user');
    expect(revoke).toContain('--yes revoke every grant of the user without asking');
    expect(revoke).toContain('--user <user> required: the user: its user_id');
    expect(revoke).toContain('or the identifier it logged in with (its claimed id)');
    const listHelp = await help('list');
    expect(listHelp).toContain('filters are optional');
    expect(listHelp).toContain("--user <user> only this user's grants: the user: its user_id");
    expect(listHelp).toContain('or the identifier it logged in with (its claimed id)');
  });
});
