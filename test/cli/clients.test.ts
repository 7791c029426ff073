/**
 * The operator's CLI, each command run as a real process on the database a running app uses
 * (SQLite and PostgreSQL), with its effects proven over HTTP: at the token endpoint and `/v1/realms`.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCli } from '../support/cli.js';
import { sqlEngines } from '../support/databases.js';
import { answerDevice } from '../support/device.js';
import { exchangeCode, obtainCode, parseForm } from '../support/flow.js';

// Every command is a process of its own (Node + tsx start-up each time).
vi.setConfig({ testTimeout: 60_000 });

const sql = await sqlEngines('cli_clients');
const { engines } = sql;
afterAll(sql.cleanup);

describe.each(engines)('openid-oauth-bridge clients and grants on $name', ({ skip, url }) => {
  const test = it.skipIf(skip !== null);
  const suffix = skip === null ? '' : ` (${skip})`;

  /** A running app on a fresh database, and the CLI pointed at the same database. */
  async function appAndCli(): Promise<{
    t: TestApp;
    cli: (...args: string[]) => ReturnType<typeof runCli>;
    close(): Promise<void>;
  }> {
    const databaseUrl = url();
    const storage = await connectStorage(databaseUrl, { migrate: true });
    const t = await createTestApp({
      storage,
      scopes: { realms: 'See your realms', profile: 'See your profile' },
    });
    return {
      t,
      // The CLI told the scopes the app offers, as an operator sets OFFERED_SCOPES.
      cli: (...args) =>
        runCli(['--database-url', databaseUrl, ...args], { OFFERED_SCOPES: 'realms profile' }),
      async close() {
        await t.close();
        await storage.close();
      },
    };
  }

  test(`adds, lists and shows clients in the spec's field names${suffix}`, async () => {
    const { t, cli, close } = await appAndCli();
    try {
      const added = await cli(
        '--json',
        'clients',
        'add',
        '--name',
        'Photo <printer>',
        '--redirect-uri',
        'https://printer.example/cb',
        '--scope',
        'realms',
        'profile',
        '--default-scope',
        'realms',
        '--contact',
        'dev@printer.example',
      );
      // Every command names its database on stderr, and only that when it succeeds.
      expect(added.stderr).toMatch(/^database: \S+ \(from --database-url\)\n$/);
      const client = JSON.parse(added.stdout) as Record<string, unknown>;
      expect(client).toMatchObject({
        application_name: 'Photo <printer>',
        redirect_uri: 'https://printer.example/cb',
        grant_type: 'authorization_code',
        scope: 'realms profile',
        default_scope: 'realms',
        contacts: ['dev@printer.example'],
        disabled: false,
      });
      expect(client.client_secret).toMatch(/^[\w-]{43}$/);

      // The secret is stored as a hash only, and works at the token endpoint of the running app.
      const stored = await t.storage.clients.find(client.client_id as string);
      expect(JSON.stringify(stored)).not.toContain(client.client_secret as string);

      const implicit = await cli(
        'clients',
        'add',
        '--name',
        'SPA',
        '--redirect-uri',
        'https://spa.example/',
        '--grant',
        'implicit',
        '--scope',
        'realms',
      );
      expect(implicit.code).toBe(0);
      expect(implicit.stdout).toMatch(/^client_id {6}\S+\n$/); // No secret for an implicit client.

      const list = JSON.parse((await cli('--json', 'clients', 'list')).stdout) as { client_id: string }[];
      expect(list.map((c) => c.client_id)).toContain(client.client_id);
      expect(list).toHaveLength(4); // The test app's two clients and the two added here.

      const shown = await cli('clients', 'show', client.client_id as string);
      expect(shown.stdout).toContain('application_name  Photo <printer>');
      expect(shown.stdout).not.toContain(client.client_secret as string);

      const missing = await cli('clients', 'show', 'no-such-client');
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(
        /\nerror: no client has client_id no-such-client \(see: clients list\)\n$/,
      );
      const bad = await cli(
        'clients',
        'add',
        '--name',
        'X',
        '--redirect-uri',
        'https://x.example/#frag',
        '--scope',
        'realms',
      );
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^error: redirectUri .*\n$/m);
    } finally {
      await close();
    }
  });

  test(`rotate-secret: the old secret stops working at once, the new one works${suffix}`, async () => {
    const { t, cli, close } = await appAndCli();
    try {
      const { code } = await obtainCode(t);
      const rotated = await cli('--json', 'clients', 'rotate-secret', t.codeClient.clientId);
      const { client_secret } = JSON.parse(rotated.stdout) as { client_secret: string };
      expect(client_secret).not.toBe(t.codeClient.clientSecret);

      const old = await exchangeCode(t, code);
      expect(old.status).toBe(401);
      expect(old.body).toMatchObject({ error: 'invalid_client' });
      const fresh = await exchangeCode(t, code, { client_secret });
      expect(fresh.status).toBe(200);

      const implicit = await cli('clients', 'rotate-secret', t.implicitClient.clientId);
      expect(implicit).toMatchObject({ code: 1 });
      expect(implicit.stderr).toMatch(/public client: it has no secret/);
    } finally {
      await close();
    }
  });

  test(`disable stops the client's tokens at once; enable restores them; remove deletes everything${suffix}`, async () => {
    const { t, cli, close } = await appAndCli();
    try {
      const { code } = await obtainCode(t);
      const tokens = (await exchangeCode(t, code)).body as { access_token: string; refresh_token: string };
      const api = () => t.agent.get('/v1/realms').set('Authorization', `Bearer ${tokens.access_token}`);
      expect((await api()).status).toBe(200);

      expect((await cli('clients', 'disable', t.codeClient.clientId)).stdout).toBe(
        `Client ${t.codeClient.clientId} is disabled.\n`,
      );
      expect((await api()).status).toBe(401);
      const refresh = await t.agent.post('/oauth/token').type('form').send({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        redirect_uri: 'https://client.example/cb',
        client_id: t.codeClient.clientId,
        client_secret: t.codeClient.clientSecret,
      });
      expect(refresh.status).toBe(401);

      await cli('clients', 'enable', t.codeClient.clientId);
      expect((await api()).status).toBe(200);

      expect((await cli('clients', 'remove', t.codeClient.clientId)).code).toBe(0);
      expect((await api()).status).toBe(401);
      expect(await t.storage.clients.find(t.codeClient.clientId)).toBeNull();
      expect((await cli('clients', 'show', t.codeClient.clientId)).code).toBe(1);
    } finally {
      await close();
    }
  });

  test(`grants list and revoke: tokens stop at once and the next authorization asks again${suffix}`, async () => {
    const { t, cli, close } = await appAndCli();
    try {
      const { code } = await obtainCode(t);
      const tokens = (await exchangeCode(t, code)).body as { access_token: string };
      const grants = JSON.parse(
        (await cli('--json', 'grants', 'list', '--client', t.codeClient.clientId)).stdout,
      ) as {
        user_id: string;
        user_identifier: string;
        grant_id: string;
        authorized_at: string;
        updated_at: string;
      }[];
      expect(grants).toHaveLength(1);
      expect(grants[0]!.user_identifier).toContain('alice');
      const [grant] = await t.storage.grants.list({ clientId: t.codeClient.clientId });
      expect(grants[0]!.grant_id).toBe(grant!.grantId);
      expect(new Date(grants[0]!.authorized_at).getTime()).toBe(grant!.createdAt);
      expect(JSON.parse((await cli('--json', 'grants', 'list', '--user', 'nobody')).stdout)).toEqual([]);

      // By the identifier the user logged in with, as grants list shows it (issue 29).
      const revoked = await cli(
        'grants',
        'revoke',
        '--user',
        grants[0]!.user_identifier,
        '--client',
        t.codeClient.clientId,
      );
      expect(revoked.stdout).toMatch(/^Revoked: the grant and every token and code issued under it\./);
      const [after] = await t.storage.grants.list({ clientId: t.codeClient.clientId });
      expect(after!.revokedAt).toEqual(expect.any(Number));
      // A revoked grant is no longer listed.
      expect(
        JSON.parse((await cli('--json', 'grants', 'list', '--client', t.codeClient.clientId)).stdout),
      ).toEqual([]);
      expect(
        (await t.agent.get('/v1/realms').set('Authorization', `Bearer ${tokens.access_token}`)).status,
      ).toBe(401);

      // Still logged in, but no longer trusted: the consent page comes back.
      const again = await t.agent.get('/oauth/authorize').query({
        response_type: 'code',
        client_id: t.codeClient.clientId,
        redirect_uri: 'https://client.example/cb',
        state: 'again',
      });
      expect(again.status).toBe(200);
      expect(parseForm(again.text).action).toContain('/oauth/authorize/decision');

      const nothing = await cli(
        'grants',
        'revoke',
        '--user',
        grants[0]!.user_id,
        '--client',
        t.codeClient.clientId,
      );
      expect(nothing.code).toBe(1);
    } finally {
      await close();
    }
  });

  test(`registers public native and device clients; a device grant is listed and revoked like any${suffix}`, async () => {
    const { t, cli, close } = await appAndCli();
    try {
      const help = (await cli('clients', 'add', '--help')).stdout.replace(/\s+/g, ' ');
      expect(help).toContain('device (CLI tools, bots, consoles: RFC 8628)');
      expect(help).toContain('--public a public client, with no secret');

      const device = await cli(
        '--json',
        'clients',
        'add',
        '--name',
        'Realm CLI',
        '--grant',
        'device',
        '--public',
        '--scope',
        'realms',
      );
      expect(device.code).toBe(0);
      const json = JSON.parse(device.stdout);
      expect(json).toMatchObject({ grant_type: 'device_code', public: true, redirect_uri: '' });
      expect(json.client_secret).toBeUndefined();
      const shown = await cli('clients', 'show', json.client_id);
      expect(shown.stdout).toMatch(/redirect_uri\s+\(none: device flow\)/);
      expect(shown.stdout).toMatch(/client type\s+public \(no secret\)/);

      const native = await cli(
        '--json',
        'clients',
        'add',
        '--name',
        'Desktop',
        '--public',
        '--redirect-uri',
        'http://127.0.0.1/callback',
        '--scope',
        'realms',
      );
      expect(JSON.parse(native.stdout)).toMatchObject({
        grant_type: 'authorization_code',
        public: true,
        require_pkce: true,
      });
      const gated = await cli(
        '--json',
        'clients',
        'add',
        '--name',
        'Team dashboard',
        '--redirect-uri',
        'https://dash.example/cb',
        '--scope',
        'realms',
        '--allowed-team',
        'team-a',
        'team-b',
      );
      expect(JSON.parse(gated.stdout)).toMatchObject({ allowed_teams: ['team-a', 'team-b'] });
      const badTeam = await cli(
        'clients',
        'add',
        '--name',
        'X',
        '--redirect-uri',
        'https://x.example/cb',
        '--scope',
        'realms',
        '--allowed-team',
        '~Team A',
      );
      expect(badTeam.stderr).toMatch(/allowedTeams must list at most 50 Launchpad team names/);
      const refused = await cli(
        'clients',
        'add',
        '--name',
        'X',
        '--grant',
        'device',
        '--redirect-uri',
        'https://x.example/cb',
        '--scope',
        'realms',
      );
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/device_code client has no redirect URI/);
      const missing = await cli('clients', 'add', '--name', 'X', '--scope', 'realms');
      expect(missing.stderr).toMatch(/needs a redirectUri/);

      // The device flow through the app, then the operator's view of it.
      const started = await t.agent
        .post('/oauth/device_authorization')
        .type('form')
        .send({ client_id: json.client_id });
      await answerDevice(t, started.body.user_code, 'allow');
      const grants = JSON.parse((await cli('--json', 'grants', 'list', '--client', json.client_id)).stdout);
      expect(grants).toHaveLength(1);
      const revoked = await cli('grants', 'revoke', '--user', grants[0].user_id, '--client', json.client_id);
      expect(revoked.code).toBe(0);
      const poll = await t.agent.post('/oauth/token').type('form').send({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: started.body.device_code,
        client_id: json.client_id,
      });
      expect(poll.body.error).toBe('invalid_grant');

      const confidential = await cli('--json', 'clients', 'update', json.client_id, '--confidential');
      expect(JSON.parse(confidential.stdout).client_secret).toBeTruthy();
    } finally {
      await close();
    }
  });
});
