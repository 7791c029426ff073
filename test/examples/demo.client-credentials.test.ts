/**
 * Issue 42 in the demo (`npm run demo`): a bot registered with the CLI (`clients add --grant
 * client_credentials`, its secret in `--json`) gets tokens of its own with openid-client 6's
 * `clientCredentialsGrant` and with the MCP TypeScript SDK's `ClientCredentialsProvider`, and calls
 * the API and the MCP server, where `whoami` shows no member; the CLI's `clients disable` and
 * `clients remove` end its tokens at once. With `OAUTH_PROFILE=oauth2.1` the demo drops the
 * implicit grant and asks every code flow for PKCE.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startDemo, type RunningDemo } from '../support/demo-process.js';
import { recordingFetch } from '../support/mcp.js';

const dir = mkdtempSync(join(tmpdir(), 'oob-demo-bot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a bot acting as itself, against the demo', () => {
  const databaseUrl = `sqlite:${join(dir, 'demo.db')}`;
  let demo: RunningDemo;
  let bot: { client_id: string; client_secret: string };
  /** Where the demo listens (its PUBLIC_URL says localhost). */
  let origin: string;

  beforeAll(async () => {
    const added = await runCli([
      '--database-url',
      databaseUrl,
      '--json',
      'clients',
      'add',
      '--migrate',
      '--name',
      'Stats crawler',
      '--grant',
      'client_credentials',
      '--client-id',
      'stats-bot',
      '--scope',
      'realms:read',
    ]);
    expect(added.code, added.stderr).toBe(0);
    bot = JSON.parse(added.stdout) as typeof bot;
    demo = await startDemo({ DATABASE_URL: databaseUrl });
    origin = `http://127.0.0.1:${new URL(demo.serverUrl).port}`;
  }, 90_000);
  afterAll(() => demo?.stop());

  it('the CLI registers it confidential, without a redirect URI, its secret shown once', () => {
    expect(bot).toMatchObject({
      client_id: 'stats-bot',
      grant_type: 'client_credentials',
      public: false,
      redirect_uri: '',
      scope: 'realms:read',
    });
    expect(bot.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('openid-client 6 clientCredentialsGrant gets a token that calls /v1/realms as the client', async () => {
    const config = await client.discovery(
      new URL(demo.serverUrl),
      bot.client_id,
      undefined,
      client.ClientSecretBasic(bot.client_secret),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
    );
    const tokens = await client.clientCredentialsGrant(config, { scope: 'realms:read' });
    expect(tokens.refresh_token).toBeUndefined();
    const realms = await fetch(`${origin}/v1/realms`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(realms.status).toBe(200);
    expect(await realms.json()).toEqual({ owner: null, client: 'stats-bot', realms: [] });
    // The demo's introspection, as the bot: the token's subject is the client.
    expect(await client.tokenIntrospection(config, tokens.access_token)).toMatchObject({
      active: true,
      sub: 'stats-bot',
      client_id: 'stats-bot',
      subject_kind: 'client',
    });
  });

  it("the MCP SDK's ClientCredentialsProvider connects to /mcp by itself; whoami shows no member", async () => {
    const { fetch: recording, exchanges } = recordingFetch();
    const provider = new ClientCredentialsProvider({
      clientId: bot.client_id,
      clientSecret: bot.client_secret,
      expectedIssuer: demo.serverUrl,
      scope: 'realms:read',
    });
    const mcp = new Client({ name: 'stats-crawler', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${demo.serverUrl}/mcp`), {
        authProvider: provider,
        fetch: recording,
      }),
    );
    try {
      const answer = (await mcp.callTool({ name: 'whoami', arguments: {} })) as {
        content: { type: string; text: string }[];
      };
      expect(JSON.parse(answer.content[0]!.text)).toEqual({
        member: null,
        sub: 'stats-bot',
        client_id: 'stats-bot',
        scope: 'realms:read',
      });
      // A tool that acts for a member says it has none.
      const realms = (await mcp.callTool({ name: 'list_realms', arguments: {} })) as { isError?: boolean };
      expect(realms.isError).toBe(true);
    } finally {
      await mcp.close();
    }
    // The SDK asked for a token of the MCP server (RFC 8707) with the client credentials grant.
    const tokenRequest = exchanges.find((exchange) => exchange.url.endsWith('/oauth/token'));
    const form = new URLSearchParams(tokenRequest!.body);
    expect(form.get('grant_type')).toBe('client_credentials');
    expect(form.get('resource')).toBe(`${demo.serverUrl}/mcp`);
    expect(tokenRequest!.status).toBe(200);
  });

  it('the CLI’s clients disable and clients remove end its tokens at once', async () => {
    const token = async () => {
      const res = await fetch(`${origin}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${bot.client_id}:${bot.client_secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { access_token: string }).access_token;
    };
    const api = async (accessToken: string) =>
      (await fetch(`${origin}/v1/realms`, { headers: { authorization: `Bearer ${accessToken}` } })).status;
    const cli = async (...args: string[]) => {
      const result = await runCli(['--database-url', databaseUrl, 'clients', ...args]);
      expect(result.code, result.stderr).toBe(0);
    };

    const first = await token();
    expect(await api(first)).toBe(200);
    await cli('disable', 'stats-bot');
    expect(await api(first)).toBe(401);
    await cli('enable', 'stats-bot');
    const second = await token();
    expect(await api(second)).toBe(200);
    await cli('remove', 'stats-bot');
    expect(await api(second)).toBe(401);
    expect(await api(first)).toBe(401);
  });

  it('the demo registers a bot of its own and prints its credentials', () => {
    expect(demo.output()).toContain('Demo realm bot, client credentials: acts as itself, for no member');
    expect(demo.output()).toMatch(/^ {4}client_id {6}demo-bot-client$/m);
    expect(demo.output()).toContain('Profile: oauth2, the default');
  });
});

describe('the demo with OAUTH_PROFILE=oauth2.1', () => {
  let demo: RunningDemo;
  let origin: string;
  beforeAll(async () => {
    demo = await startDemo({ OAUTH_PROFILE: 'oauth2.1' });
    origin = `http://127.0.0.1:${new URL(demo.serverUrl).port}`;
  }, 90_000);
  afterAll(() => demo?.stop());

  it('says so in its banner and its metadata', async () => {
    expect(demo.output()).toContain('Profile: oauth2.1 (OAUTH_PROFILE)');
    expect(demo.output()).toContain('(refused: OAUTH_PROFILE=oauth2.1 has no implicit grant)');
    const metadata = (await (
      await fetch(`${origin}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(metadata.response_types_supported).toEqual(['code']);
    expect(metadata.grant_types_supported).not.toContain('implicit');
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('refuses the implicit request and a code request without PKCE at the redirect URI', async () => {
    const authorize = (query: Record<string, string>) =>
      fetch(`${origin}/oauth/authorize?${new URLSearchParams(query)}`, { redirect: 'manual' });
    const implicit = await authorize({
      response_type: 'token',
      client_id: 'demo-implicit-client',
      redirect_uri: `${demo.clientUrl}/implicit`,
      state: 's',
    });
    expect(implicit.status).toBe(302);
    expect(new URLSearchParams(new URL(implicit.headers.get('location')!).hash.slice(1)).get('error')).toBe(
      'unsupported_response_type',
    );
    const noPkce = await authorize({
      response_type: 'code',
      client_id: 'demo-code-client',
      redirect_uri: `${demo.clientUrl}/callback`,
      state: 's',
    });
    expect(noPkce.status).toBe(302);
    expect(new URL(noPkce.headers.get('location')!).searchParams.get('error_description')).toBe(
      'code challenge required',
    );
  });
});
