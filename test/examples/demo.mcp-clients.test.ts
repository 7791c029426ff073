/**
 * Issue 39: MCP clients connect to the demo's MCP server (`npm run demo`, `${PUBLIC_URL}/mcp`) by
 * themselves. The official TypeScript SDK's clients, unmodified (v1 newest, v1 1.23.0, v2), each
 * with the demo's pre-registered MCP client: the 401 leads them to the protected resource metadata
 * and the authorization server, a person signs in at the development provider and trusts the
 * client, and the tools answer for that person. Tokens are bound to their resource: one for the
 * MCP server is refused by the API and the other way round. A client registered with the CLI uses
 * both resources with its default scopes.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startDemo, type RunningDemo } from '../support/demo-process.js';
import {
  MCP_SDKS,
  MemoryOAuthProvider,
  PersonAtServer,
  connectSignedIn,
  recordingFetch,
  type Exchange,
  type McpConnection,
  type McpSdk,
} from '../support/mcp.js';

/** The demo's MCP client (examples/demo.ts), as Claude Code is given it. */
const DEMO_MCP_CLIENT = { clientId: 'demo-mcp-client', redirectUrl: 'http://localhost:8976/callback' };
/** Registered with the CLI before the demo starts. */
const CLI_CLIENT = { clientId: 'cli-mcp-client', redirectUrl: 'http://127.0.0.1/callback' };

const dir = mkdtempSync(join(tmpdir(), 'oob-demo-mcp-'));
let demo: RunningDemo;
/** Where the demo listens (its PUBLIC_URL says localhost). */
let origin: string;
let mcpUrl: string;

beforeAll(async () => {
  // A database file, so that the CLI registers a client in it before the demo starts.
  const databaseUrl = `sqlite:${join(dir, 'demo.db')}`;
  const registered = await runCli([
    '--database-url',
    databaseUrl,
    'clients',
    'add',
    '--migrate',
    '--name',
    'An MCP client registered with the CLI',
    '--public',
    '--redirect-uri',
    CLI_CLIENT.redirectUrl,
    '--client-id',
    CLI_CLIENT.clientId,
    '--scope',
    'realms:read',
    'realms:write',
    '--default-scope',
    'realms:read',
  ]);
  expect(registered.code, registered.stderr).toBe(0);
  demo = await startDemo({ DATABASE_URL: databaseUrl });
  origin = `http://127.0.0.1:${new URL(demo.serverUrl).port}`;
  mcpUrl = `${demo.serverUrl}/mcp`;
}, 90_000);
afterAll(async () => {
  await demo?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The demo's answer at `path`, sent to where it listens. */
const at = (path: string, init?: RequestInit) => fetch(`${origin}${path}`, { ...init, redirect: 'manual' });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
};
const postMcp = (headers: Record<string, string>, message: unknown = initialize) =>
  at('/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(message),
  });

describe('discovery, as an MCP client starts it', () => {
  it('the banner prints the MCP URL and how to add it to Claude Code', () => {
    expect(demo.output()).toContain(`MCP server (tools whoami, list_realms, write_realm): ${mcpUrl}`);
    expect(demo.output()).toContain(
      `claude mcp add --transport http --client-id demo-mcp-client --callback-port 8976 demo-realms ${mcpUrl}`,
    );
  });

  it('the 401 at /mcp names its protected resource metadata and realms:read; the metadata names the issuer, byte for byte', async () => {
    const refused = await postMcp({});
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get('www-authenticate')!;
    const metadataUrl = `${demo.serverUrl}/.well-known/oauth-protected-resource/mcp`;
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${metadataUrl}"`);
    expect(challenge).toContain('scope="realms:read"');

    const resource = (await (await at(new URL(metadataUrl).pathname)).json()) as Record<string, unknown>;
    expect(resource.resource).toBe(mcpUrl);
    expect(resource.authorization_servers).toEqual([demo.serverUrl]);
    const server = await at('/.well-known/oauth-authorization-server');
    expect(server.status).toBe(200);
    const metadata = (await server.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe((resource.authorization_servers as string[])[0]);
    expect(metadata.code_challenge_methods_supported).toContain('S256');
  });

  it('a write_realm call without a token is told it needs realms:read and realms:write', async () => {
    const refused = await postMcp({}, writeRealmCall('Nowhere'));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('scope="realms:read realms:write"');
  });

  it('GET and DELETE need a token too; with one they are 405 (a stateless server)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await at('/mcp', { method });
      expect(res.status, method).toBe(401);
      expect(res.headers.get('www-authenticate'), method).toContain('resource_metadata=');
    }
  });
});

/** The realms of a user as the API shows them, with a token for the API. */
async function realmsOfApi(token: string): Promise<unknown[]> {
  const res = await at('/v1/realms', { headers: bearer(token) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { realms: unknown[] }).realms;
}

const writeRealmCall = (name: string) => ({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'write_realm', arguments: { name } },
});

/**
 * A token for the API (the default resource), for `client`, through the code flow with PKCE and
 * no `resource` nor `scope`: the client's default scopes on the default resource.
 */
async function apiToken(
  person: PersonAtServer,
  client: typeof CLI_CLIENT,
  extra: Record<string, string> = {},
) {
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUrl,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'api',
    ...extra,
  });
  const back = await person.authorize(`${demo.serverUrl}/oauth/authorize?${query}`);
  expect(back.searchParams.get('state')).toBe('api');
  const res = await at('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: back.origin + back.pathname,
      client_id: client.clientId,
      code_verifier: verifier,
      ...(extra.resource === undefined ? {} : { resource: extra.resource }),
    }),
  });
  const tokens = (await res.json()) as { access_token: string; scope: string };
  expect(res.status, JSON.stringify(tokens)).toBe(200);
  return tokens;
}

/** The `sub` of an ID token for the person, from the demo's OpenID Connect client. */
async function idTokenSubject(person: PersonAtServer): Promise<string> {
  const secret = /client_id {6}demo-oidc-client\n {4}client_secret {2}(\S+)/.exec(demo.output())?.[1];
  expect(secret, demo.output()).toBeDefined();
  const redirectUri = 'http://127.0.0.1:8080/callback';
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: 'demo-oidc-client',
    redirect_uri: redirectUri,
    scope: 'openid',
    nonce: randomBytes(8).toString('hex'),
  });
  const back = await person.authorize(`${demo.serverUrl}/oauth/authorize?${query}`);
  const res = await at('/oauth/token', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`demo-oidc-client:${secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: redirectUri,
    }),
  });
  const { id_token: idToken } = (await res.json()) as { id_token: string };
  expect(res.status).toBe(200);
  return (JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()) as { sub: string }).sub;
}

const tokenRequests = (exchanges: Exchange[], grantType: string) =>
  exchanges
    .filter((e) => e.url.endsWith('/oauth/token') && e.method === 'POST')
    .map((e) => new URLSearchParams(e.body))
    .filter((form) => form.get('grant_type') === grantType);

describe.each(MCP_SDKS.map((sdk, i) => ({ sdk, user: `mcp-user-${i}` })))(
  '$sdk.name, with the pre-registered client',
  ({ sdk, user }: { sdk: McpSdk; user: string }) => {
    const recorder = recordingFetch();
    const provider = new MemoryOAuthProvider(DEMO_MCP_CLIENT);
    let person: PersonAtServer;
    let mcp: McpConnection;

    it('signs in through the OpenID 2.0 provider and the consent page, and calls whoami', async () => {
      person = new PersonAtServer(demo.serverUrl, origin, user);
      mcp = await connectSignedIn(sdk, mcpUrl, provider, person, recorder.fetch);
      // What the SDK asked for: the MCP server as the resource, the scope the 401 named.
      const [exchange] = tokenRequests(recorder.exchanges, 'authorization_code');
      expect(exchange?.get('resource')).toBe(mcpUrl);
      expect(exchange?.get('client_id')).toBe(DEMO_MCP_CLIENT.clientId);
      const saved = provider.tokens() as { scope?: string };
      expect(saved.scope).toBe('realms:read');

      const me = (await mcp.callTool('whoami')) as Record<string, unknown>;
      expect(me).toMatchObject({
        client_id: DEMO_MCP_CLIENT.clientId,
        identifier: `${demo.providerUrl}/user/${user}`,
        scope: 'realms:read',
      });
      expect(me.sub).toBe(await idTokenSubject(person));
    }, 60_000);

    it('list_realms shows what /v1/realms shows the same person; each token works at its own resource only', async () => {
      const realms = (await mcp.callTool('list_realms')) as { realms: unknown[] };
      const api = await apiToken(person, CLI_CLIENT);
      expect(await realmsOfApi(api.access_token)).toEqual(realms.realms);

      const mcpToken = (provider.tokens() as { access_token: string }).access_token;
      const atApi = await at('/v1/realms', { headers: bearer(mcpToken) });
      expect(atApi.status).toBe(401);
      expect(atApi.headers.get('www-authenticate')).toContain('error="invalid_token"');
      const atMcp = await postMcp(bearer(api.access_token));
      expect(atMcp.status).toBe(401);
      expect(atMcp.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }, 60_000);

    it('refreshes an access token that stopped working, naming the resource', async () => {
      const tokens = provider.tokens() as { access_token: string; refresh_token?: string };
      expect(tokens.refresh_token).toBeTruthy();
      provider.saveTokens({ ...tokens, access_token: 'no-longer-valid' });
      expect(await mcp.callTool('whoami')).toMatchObject({ client_id: DEMO_MCP_CLIENT.clientId });
      const [refresh] = tokenRequests(recorder.exchanges, 'refresh_token');
      expect(refresh?.get('resource')).toBe(mcpUrl);
    }, 60_000);

    it('write_realm: a step-up challenge, the same string every time, then realms:write once the person agrees', async () => {
      const from = recorder.exchanges.length;
      for (let call = 0; call < 2; call += 1) {
        const err = await mcp.callTool('write_realm', { name: 'Moonbase' }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, `call ${call}`).not.toBeNull();
      }
      const challenges = recorder.exchanges
        .slice(from)
        .filter((e) => e.url === mcpUrl && e.status === 403)
        .map((e) => e.wwwAuthenticate);
      expect(challenges.length).toBeGreaterThanOrEqual(2);
      expect(new Set(challenges).size).toBe(1);
      expect(challenges[0]).toContain('error="insufficient_scope"');
      expect(challenges[0]).toContain('scope="realms:read realms:write"');
      expect(challenges[0]).toContain(
        `resource_metadata="${demo.serverUrl}/.well-known/oauth-protected-resource/mcp"`,
      );

      // The v2 client asks for the union of scopes at once. A v1 client refreshes (the same
      // scopes), meets the same challenge, and stops: its host then signs in again, and the 401
      // names what the call needs.
      if (provider.authorizationUrls.length === 0) {
        provider.invalidateCredentials('tokens');
        const err = await mcp.callTool('write_realm', { name: 'Moonbase' }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(sdk.isUnauthorized(err), String(err)).toBe(true);
      }
      const authorization = provider.authorizationUrls.splice(0).at(-1)!;
      expect(authorization.searchParams.get('scope')?.split(' ').sort()).toEqual([
        'realms:read',
        'realms:write',
      ]);
      expect(authorization.searchParams.get('resource')).toBe(mcpUrl);
      await mcp.finishAuth(await person.authorize(authorization));

      const added = (await mcp.callTool('write_realm', { name: 'Moonbase' })) as { realm: { name: string } };
      expect(added.realm.name).toBe('Moonbase');
      const { realms } = (await mcp.callTool('list_realms')) as { realms: { name: string }[] };
      expect(realms.map((r) => r.name)).toContain('Moonbase');
      await mcp.close();
    }, 60_000);
  },
);

describe('a client registered with the CLI', () => {
  it('uses both resources, with its default scopes when a request names none', async () => {
    const person = new PersonAtServer(demo.serverUrl, origin, 'cli-user');
    const api = await apiToken(person, CLI_CLIENT);
    expect(api.scope).toBe('realms:read');
    expect(await realmsOfApi(api.access_token)).toHaveLength(3);

    const mcpToken = await apiToken(person, CLI_CLIENT, { resource: mcpUrl });
    expect(mcpToken.scope).toBe('realms:read');
    const answer = await postMcp(bearer(mcpToken.access_token));
    expect(answer.status).toBe(200);
    expect(
      ((await answer.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name,
    ).toBe('demo-realms');

    // What the guard reads before the SDK: a body that is not JSON, a tool name that is not one.
    const notJson = await at('/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(mcpToken.access_token) },
      body: '{"jsonrpc":',
    });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const odd = await postMcp(bearer(mcpToken.access_token), {
      ...writeRealmCall('x'),
      params: { name: '__proto__', arguments: {} },
    });
    expect(odd.status).toBe(200);
  }, 60_000);

  it('an unknown resource is invalid_target', async () => {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: CLI_CLIENT.clientId,
      redirect_uri: CLI_CLIENT.redirectUrl,
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
      resource: `${demo.serverUrl}/elsewhere`,
    });
    const res = await at(`/oauth/authorize?${query}`);
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');
  });
});
