/**
 * Dynamic client registration (RFC 7591) at `POST /oauth/register`, on a real server: a public
 * client registers and runs the whole code flow with PKCE (on the memory adapter and on
 * PostgreSQL), the answer echoes what was registered, a confidential client needs an initial
 * access token, the metadata names the endpoint only when it is on, and openid-client's own
 * registration (an implementation written elsewhere) reads the answer.
 */
import { json } from 'express';
import * as oidcClient from 'openid-client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createAuthorizationServer,
  memoryStorage,
  type ServerEvent,
  type Storage,
} from '../../../src/index.js';
import {
  CODE_REDIRECT,
  createTestApp,
  expectOAuthError,
  type TestApp,
  type TestAppOptions,
} from '../../support/app.js';
import { freshPostgresStorage, postgresAvailability } from '../../support/databases.js';
import { callRealms } from '../../support/endpoints.js';
import { authorizeWithLogin, basicAuth } from '../../support/flow.js';
import { publicCodeFlow, register } from '../../support/registration.js';

const SCOPES = { realms: 'See your realms', 'realms:write': 'Change your realms' };
const MCP_REDIRECT = 'https://mcp-client.example/api/mcp/auth_callback';
const INITIAL_TOKEN = 'an-initial-access-token-for-tests';

/** What claude.ai and the MCP TypeScript SDK send: a public client, both grant types, extras. */
const MCP_CLIENT = {
  client_name: 'Claude-like MCP client',
  redirect_uris: [MCP_REDIRECT],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  scope: 'realms',
  logo_uri: 'https://mcp-client.example/logo.png',
  software_id: 'mcp-client',
};

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function start(options: TestAppOptions = {}): Promise<TestApp> {
  t = await createTestApp({
    scopes: SCOPES,
    dynamicRegistration: { initialAccessTokens: [INITIAL_TOKEN] },
    ...options,
  });
  return t;
}

const postgres = await postgresAvailability();
const disposers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const dispose of disposers) await dispose();
});

const backends: { name: string; skip: string | null; storage(): Promise<Storage> }[] = [
  { name: 'memory', skip: null, storage: async () => memoryStorage() },
  {
    name: 'PostgreSQL',
    skip: postgres.ok ? null : `NOT TESTED: ${postgres.reason}`,
    async storage() {
      const { storage, dispose } = await freshPostgresStorage('dcr');
      disposers.push(dispose);
      return storage;
    },
  },
];

describe.each(backends)('a public client registers itself and signs a person in ($name)', (backend) => {
  it.skipIf(backend.skip !== null)(
    `answers 201 with what it registered, then the code flow with PKCE gives tokens${backend.skip ? ` (${backend.skip})` : ''}`,
    async () => {
      const app = await start({ storage: await backend.storage() });
      const events: ServerEvent[] = [];
      app.server.events.on('*', (event) => void events.push(event));
      const before = app.server.clock();
      const res = await register(app, MCP_CLIENT);
      expect(res.status).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        client_id: expect.any(String),
        client_id_issued_at: expect.any(Number),
        client_name: 'Claude-like MCP client',
        redirect_uris: [MCP_REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'realms',
      });
      expect(res.body.client_id_issued_at).toBeGreaterThanOrEqual(Math.floor(before / 1000));
      const clientId = res.body.client_id as string;

      const stored = await app.storage.clients.find(clientId);
      expect(stored).toMatchObject({
        applicationName: 'Claude-like MCP client',
        redirectUri: MCP_REDIRECT,
        grantType: 'authorization_code',
        secretHash: null,
        scopes: ['realms'],
        registeredVia: 'dynamic',
      });
      expect(stored!.unusedExpiresAt).toBeGreaterThan(before);
      expect(events).toContainEqual(
        expect.objectContaining({
          type: 'client.registered',
          clientId,
          redirectUri: MCP_REDIRECT,
          public: true,
          initialAccessToken: false,
        }),
      );

      const tokens = await publicCodeFlow(app, { clientId, redirectUri: MCP_REDIRECT, scope: 'realms' });
      expect(tokens.scope).toBe('realms');
      expect((await callRealms(app, tokens.access_token)).status).toBe(200);
      // Its first token marks it used: prune keeps it from then on.
      expect((await app.storage.clients.find(clientId))!.unusedExpiresAt ?? null).toBeNull();
      const refreshed = await app.agent
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
      expect(refreshed.status).toBe(200);
    },
  );
});

describe('the consent page', () => {
  it('says the application registered itself, with where it sends the person back', async () => {
    const app = await start();
    const { client_id: clientId } = (await register(app, { ...MCP_CLIENT, client_name: 'Google Drive' }))
      .body;
    const query = { response_type: 'code', redirect_uri: MCP_REDIRECT, code_challenge_method: 'S256' };
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    const consent = await authorizeWithLogin(app, {
      ...query,
      client_id: clientId,
      code_challenge: challenge,
    });
    expect(consent.status).toBe(200);
    const text = consent.text.replace(/\s+/g, ' ');
    expect(text).toContain('Google Drive registered itself with this site: its name is its own claim');
    expect(text).toContain('after your answer you go back to <strong>mcp-client.example</strong>');
    // An application the operator registered is not marked (the person is signed in by now).
    const operators = await app.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: app.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      scope: 'realms',
    });
    expect(operators.status).toBe(200);
    expect(operators.text).toContain('Do you trust Photo Printer?');
    expect(operators.text).not.toContain('registered itself');
  });
});

describe('what a registration may leave out or add', () => {
  it('registers a public client when token_endpoint_auth_method is left out, named after its redirect host', async () => {
    const app = await start();
    const res = await register(app, { redirect_uris: [MCP_REDIRECT] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      token_endpoint_auth_method: 'none',
      client_name: 'mcp-client.example',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'realms realms:write',
    });
    expect(res.body).not.toHaveProperty('client_secret');
  });

  it('ignores grant and response types it does not register, and scopes it does not offer', async () => {
    const app = await start();
    const res = await register(app, {
      redirect_uris: [MCP_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials', 'implicit'],
      response_types: ['code', 'token'],
      scope: 'realms unknown:scope',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'realms',
    });
  });

  it('registers without scopes on a server that names none, and keeps those asked for on it', async () => {
    const app = await start({ scopes: {}, dynamicRegistration: true });
    const none = await register(app, { redirect_uris: [MCP_REDIRECT] });
    expect(none.status).toBe(201);
    expect(none.body).not.toHaveProperty('scope');
    const some = await register(app, { redirect_uris: [MCP_REDIRECT], scope: 'anything:read other' });
    expect(some.status).toBe(201);
    expect(some.body.scope).toBe('anything:read other');
  });

  it('keeps the scopes within dynamicRegistration.scopes', async () => {
    const app = await start({ dynamicRegistration: { scopes: ['realms'] } });
    const res = await register(app, { redirect_uris: [MCP_REDIRECT], scope: 'realms realms:write' });
    expect(res.status).toBe(201);
    expect(res.body.scope).toBe('realms');
    expect((await app.storage.clients.find(res.body.client_id))!.scopes).toEqual(['realms']);
  });

  it('registers a native app on a loopback address or a private-use scheme (RFC 8252)', async () => {
    const app = await start();
    for (const uri of ['http://127.0.0.1/callback', 'com.example.desktop:/callback']) {
      const res = await register(app, { redirect_uris: [uri], application_type: 'native' });
      expect(res.status, uri).toBe(201);
      expect(res.body).toMatchObject({ redirect_uris: [uri], application_type: 'native' });
    }
  });

  it("lets a native app on a loopback address use any port, as a registered one's", async () => {
    const app = await start();
    const res = await register(app, { redirect_uris: ['http://127.0.0.1/callback'], client_name: 'CLI' });
    const tokens = await publicCodeFlow(app, {
      clientId: res.body.client_id,
      redirectUri: 'http://127.0.0.1:51234/callback',
    });
    expect(tokens.access_token).toBeTruthy();
  });
});

describe('confidential clients and the initial access token', () => {
  it('refuses a confidential client without an initial access token', async () => {
    const app = await start();
    for (const method of ['client_secret_basic', 'client_secret_post']) {
      const res = await register(app, { redirect_uris: [MCP_REDIRECT], token_endpoint_auth_method: method });
      expectOAuthError(res, 'invalid_client_metadata');
      expect(res.body.error_description).toMatch(/initial access token/);
    }
    expect(await app.storage.clients.list!()).toHaveLength(2);
  });

  it('refuses a token it does not know with 401 invalid_token, even for a public client', async () => {
    const app = await start();
    for (const authorization of ['Bearer not-the-token', 'Basic Zm9vOmJhcg==', 'Bearer']) {
      const res = await register(app, { redirect_uris: [MCP_REDIRECT] }, { Authorization: authorization });
      expectOAuthError(res, 'invalid_token', 401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    }
  });

  it('registers a confidential client with one, whose secret is shown once and authenticates', async () => {
    const app = await start();
    const res = await register(
      app,
      { redirect_uris: [MCP_REDIRECT], client_name: 'Server app' },
      { Authorization: `Bearer ${INITIAL_TOKEN}` },
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret: expect.any(String),
      client_secret_expires_at: 0,
    });
    const { client_id: id, client_secret: secret } = res.body as { client_id: string; client_secret: string };
    const stored = await app.storage.clients.find(id);
    expect(stored!.secretHash).not.toBeNull();
    expect(JSON.stringify(stored)).not.toContain(secret);
    const exchange = (authorization: string) =>
      app.agent
        .post('/oauth/token')
        .set('Authorization', authorization)
        .type('form')
        .send({ grant_type: 'authorization_code', code: 'no-such-code', redirect_uri: MCP_REDIRECT });
    // Authenticated: the code is what is wrong. With another secret: the client is.
    expectOAuthError(await exchange(basicAuth(id, secret)), 'invalid_grant');
    expectOAuthError(await exchange(basicAuth(id, `${secret}x`)), 'invalid_client', 401);
  });

  it('asks the host whether a token is good when initialAccessTokens is a function', async () => {
    const seen: string[] = [];
    const app = await start({
      dynamicRegistration: {
        initialAccessTokens: (token) => {
          seen.push(token);
          return token === 'issued-by-the-host-0001';
        },
      },
    });
    const body = { redirect_uris: [MCP_REDIRECT], token_endpoint_auth_method: 'client_secret_post' };
    expect((await register(app, body, { Authorization: 'Bearer issued-by-the-host-0001' })).status).toBe(201);
    expectOAuthError(
      await register(app, body, { Authorization: 'Bearer issued-by-someone-else' }),
      'invalid_token',
      401,
    );
    expect(seen).toEqual(['issued-by-the-host-0001', 'issued-by-someone-else']);
  });

  it('reports the registration with neither the secret nor the initial access token', async () => {
    const app = await start();
    const events: ServerEvent[] = [];
    app.server.events.on('*', (event) => void events.push(event));
    const res = await register(
      app,
      { redirect_uris: [MCP_REDIRECT] },
      { Authorization: `Bearer ${INITIAL_TOKEN}` },
    );
    expect(res.status).toBe(201);
    const registered = events.filter((event) => event.type === 'client.registered');
    expect(registered).toEqual([
      expect.objectContaining({ clientId: res.body.client_id, public: false, initialAccessToken: true }),
    ]);
    const said = JSON.stringify(events);
    expect(said).not.toContain(res.body.client_secret);
    expect(said).not.toContain(INITIAL_TOKEN);
  });
});

describe('off by default', () => {
  it('has no route and no registration_endpoint without the option', async () => {
    const app = await createTestApp({ scopes: SCOPES });
    t = app;
    expect((await register(app, MCP_CLIENT)).status).toBe(404);
    const metadata = await app.agent.get('/.well-known/oauth-authorization-server');
    expect(metadata.body).not.toHaveProperty('registration_endpoint');
    expect(await app.storage.clients.list!()).toHaveLength(2);
  });

  it('names the endpoint in the metadata when on', async () => {
    const app = await start({ dynamicRegistration: true });
    const metadata = await app.agent.get('/.well-known/oauth-authorization-server');
    expect(metadata.body.registration_endpoint).toBe(`${app.baseUrl}/oauth/register`);
  });

  it('refuses to start on a storage that cannot create and update clients, or with scopes not offered', () => {
    const storage = memoryStorage();
    const options = {
      baseUrl: 'https://auth.example.com',
      providers: [{ name: 'Example ID', identifier: 'https://id.example.com/' }],
      session: { secret: 'a test session secret that is long enough' },
      scopes: SCOPES,
    };
    const clients = { ...storage.clients, create: undefined };
    expect(() =>
      createAuthorizationServer({ ...options, storage: { ...storage, clients }, dynamicRegistration: true }),
    ).toThrow(/dynamicRegistration: the storage has no clients.create and clients.update/);
    expect(() =>
      createAuthorizationServer({ ...options, storage, dynamicRegistration: { scopes: ['admin'] } }),
    ).toThrow(/dynamicRegistration.scopes: "admin" is not a scope the server offers/);
    expect(() => createAuthorizationServer({ ...options, storage, dynamicRegistration: true })).not.toThrow();
  });
});

describe("the host's own body parser", () => {
  it('reads a body that express.json() in front of the routers parsed already', async () => {
    const app = await createTestApp({ scopes: SCOPES, dynamicRegistration: true }, (express) =>
      express.use(json()),
    );
    t = app;
    const res = await register(app, MCP_CLIENT);
    expect(res.status).toBe(201);
    expect(res.body.redirect_uris).toEqual([MCP_REDIRECT]);
    expectOAuthError(
      await register(app, { ...MCP_CLIENT, redirect_uris: ['javascript:x'] }),
      'invalid_redirect_uri',
    );
  });
});

describe('an implementation written elsewhere', () => {
  it("openid-client's dynamicClientRegistration registers a public client and reads the answer", async () => {
    const app = await start();
    const config = await oidcClient.dynamicClientRegistration(
      new URL(app.baseUrl),
      { redirect_uris: [MCP_REDIRECT], token_endpoint_auth_method: 'none', client_name: 'openid-client' },
      oidcClient.None(),
      { algorithm: 'oauth2', execute: [oidcClient.allowInsecureRequests] },
    );
    const metadata = config.clientMetadata();
    expect(metadata.client_id).toEqual(expect.any(String));
    expect(metadata.redirect_uris).toEqual([MCP_REDIRECT]);
    expect(await app.storage.clients.find(metadata.client_id)).not.toBeNull();
  });
});
