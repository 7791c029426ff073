/**
 * The client credentials grant (issue 42, RFC 6749 4.4): a confidential client registered for it
 * gets an access token for itself, for no member. openid-client 6's `clientCredentialsGrant` gets
 * one and calls `/v1/realms`, where `bearerOf(res)` says the caller is the client. Hostile input is
 * refused with the RFC's errors; the token's subject is the client at introspection; its tokens end
 * when one is revoked, when the client is disabled or removed. On every storage engine.
 */
import * as client from 'openid-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/crypto/secrets.js';
import { issueClientToken } from '../../src/grants/client-credentials.js';
import { usable } from '../../src/grants/index.js';
import {
  authorizedApplications,
  registerClient,
  revokeApplication,
  updateClient,
  type Storage,
} from '../../src/index.js';
import { createTestApp, expectOAuthError, type TestApp } from '../support/app.js';
import {
  basicAuth,
  callRealms,
  mountClientEndpoints,
  postAs,
  recordEvents,
  storageEngines,
} from '../support/endpoints.js';

const engines = await storageEngines();

const API = 'https://api.example/';
const OTHER = 'https://other.example/';

/** A client credentials request, the secret in the body unless `basic` says otherwise. */
function tokenRequest(
  t: TestApp,
  credentials: { clientId: string; clientSecret?: string },
  body: Record<string, string> = {},
  basic = false,
) {
  const request = t.agent.post('/oauth/token').type('form');
  if (basic) {
    return request
      .set('Authorization', basicAuth(credentials.clientId, credentials.clientSecret!))
      .send({ grant_type: 'client_credentials', ...body });
  }
  return request.send({
    grant_type: 'client_credentials',
    client_id: credentials.clientId,
    ...(credentials.clientSecret === undefined ? {} : { client_secret: credentials.clientSecret }),
    ...body,
  });
}

describe.each(engines)('client credentials on $name storage', ({ skip, open }) => {
  const test = it.skipIf(skip !== null);
  const suffix = skip === null ? '' : ` (${skip})`;
  let t: TestApp;
  let dispose: () => Promise<void>;
  let bot: { clientId: string; clientSecret: string };

  beforeEach(async () => {
    if (skip !== null) return;
    const opened = await open();
    dispose = opened.dispose;
    t = await createTestApp({
      storage: opened.storage,
      scopes: { realms: 'See your realms', stats: 'Read the statistics', profile: 'Your name' },
    });
    mountClientEndpoints(t);
    const issued = await registerClient(t.server, {
      applicationName: 'Stats crawler',
      grantType: 'client_credentials',
      clientId: 'stats-bot',
      scopes: ['realms', 'stats'],
      defaultScopes: ['stats'],
    });
    bot = { clientId: issued.clientId, clientSecret: issued.clientSecret! };
  });
  afterEach(async () => {
    if (skip !== null) return;
    await t.close();
    await dispose();
  });

  test(`openid-client 6 clientCredentialsGrant gets a token that calls /v1/realms as the client${suffix}`, async () => {
    const config = await client.discovery(
      new URL(t.baseUrl),
      bot.clientId,
      undefined,
      client.ClientSecretBasic(bot.clientSecret),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
    );
    expect(config.serverMetadata().grant_types_supported).toContain('client_credentials');
    const tokens = await client.clientCredentialsGrant(config, { scope: 'realms' });
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('realms');
    expect(tokens.expires_in).toBe(3600);
    // RFC 6749 4.4.3: no refresh token.
    expect(tokens.refresh_token).toBeUndefined();
    const realms = await callRealms(t, tokens.access_token);
    expect(realms.status).toBe(200);
    expect(realms.body).toEqual({ realms: [], client: 'stats-bot', subject: 'client' });

    // client_secret_post too, and the client's default scopes without `scope`.
    const posted = await client.clientCredentialsGrant(
      await client.discovery(
        new URL(t.baseUrl),
        bot.clientId,
        undefined,
        client.ClientSecretPost(bot.clientSecret),
        {
          algorithm: 'oauth2',
          execute: [client.allowInsecureRequests],
        },
      ),
    );
    expect(posted.scope).toBe('stats');
  });

  test(`the token's subject is the client: introspection and the stored records say so${suffix}`, async () => {
    const events = recordEvents(t);
    const res = await tokenRequest(t, bot, { scope: 'realms stats' });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'realms stats',
    });
    const introspected = await postAs(t, '/oauth/introspect', { token: res.body.access_token }, bot);
    expect(introspected.body).toMatchObject({
      active: true,
      sub: 'stats-bot',
      client_id: 'stats-bot',
      subject_kind: 'client',
      scope: 'realms stats',
      token_type: 'Bearer',
    });
    const found = (await t.storage.tokens.find(hashSecret(res.body.access_token)))!;
    expect(found.token).toMatchObject({ origin: 'client_credentials', userId: 'client:stats-bot' });
    expect(found.grant).toMatchObject({ userId: 'client:stats-bot', clientId: 'stats-bot', revokedAt: null });
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'token.issued',
        grantType: 'client_credentials',
        clientId: 'stats-bot',
        userId: 'client:stats-bot',
        grantId: found.grant!.grantId,
        refreshToken: false,
      }),
    );
    // A second token is issued under the same grant.
    const again = await tokenRequest(t, bot, {}, true);
    expect((await t.storage.tokens.find(hashSecret(again.body.access_token)))!.token.grantId).toBe(
      found.grant!.grantId,
    );
  });

  test(`racing first requests share one grant, and every token they get works${suffix}`, async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => tokenRequest(t, bot)));
    expect(answers.map((res) => res.status)).toEqual(Array(6).fill(200));
    for (const res of answers) expect((await callRealms(t, res.body.access_token)).status).toBe(200);
    const grants = await t.storage.grants.list({ clientId: 'stats-bot' });
    expect(grants).toHaveLength(1);
  });

  test(`first requests that all find no grant still start one, and their tokens all work${suffix}`, async () => {
    // Every request reads "no grant" before any saves one: the worst interleaving.
    const racers = 5;
    const list = t.storage.grants.list.bind(t.storage.grants);
    let arrived = 0;
    let release!: () => void;
    const allArrived = new Promise<void>((resolve) => (release = resolve));
    t.storage.grants.list = async (filter) => {
      const grants = await list(filter);
      if (arrived < racers) {
        if (++arrived === racers) release();
        await allArrived;
      }
      return grants;
    };
    const registered = (await t.storage.clients.find('stats-bot'))!;
    const answers = await Promise.all(
      Array.from({ length: racers }, () =>
        issueClientToken(t.server, registered, { scopes: ['stats'] }, () => ({})),
      ),
    );
    t.storage.grants.list = list;
    const now = t.server.clock();
    for (const answer of answers) {
      expect(usable((await t.storage.tokens.find(hashSecret(answer.access_token)))!, now)).toBe(true);
    }
    expect(await t.storage.grants.list({ clientId: 'stats-bot' })).toHaveLength(1);
  });

  test(`hostile requests: a public client, the code client, a scope or resource outside the client's${suffix}`, async () => {
    // A public client names itself and proves nothing: never itself (RFC 6749 4.4.2).
    const publicClient = await registerClient(t.storage, {
      applicationName: 'Desktop app',
      redirectUri: 'http://127.0.0.1/cb',
      public: true,
      scopes: ['realms'],
    });
    expectOAuthError(await tokenRequest(t, { clientId: publicClient.clientId }), 'unauthorized_client');
    expectOAuthError(await tokenRequest(t, { clientId: 'implicit-client' }), 'unauthorized_client');
    // A confidential client registered for the code grant: authenticated, but not for this grant.
    expectOAuthError(await tokenRequest(t, t.codeClient), 'unauthorized_client');
    expectOAuthError(await tokenRequest(t, t.codeClient, {}, true), 'unauthorized_client');
    // A wrong secret is invalid_client, 401, with the Basic challenge.
    const wrong = await tokenRequest(t, { clientId: bot.clientId, clientSecret: 'wrong' });
    expectOAuthError(wrong, 'invalid_client', 401);
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic realm=/);
    // Scopes: only the client's, never openid.
    const outside = await tokenRequest(t, bot, { scope: 'stats profile' });
    expectOAuthError(outside, 'invalid_scope');
    expect(outside.body.error_description).toContain('profile');
    expectOAuthError(await tokenRequest(t, bot, { scope: 'stats "x' }), 'invalid_scope');
    // No refresh_token grant for it either.
    expectOAuthError(
      await t.agent
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: 'x', ...credentialsOf(bot) }),
      'unauthorized_client',
    );
    // At the authorization endpoint: an error page, never a redirect.
    const authorize = await t.agent
      .get('/oauth/authorize')
      .query({ response_type: 'code', client_id: 'stats-bot', redirect_uri: 'https://client.example/cb' });
    expect(authorize.status).toBe(400);
    expect(authorize.headers.location).toBeUndefined();
    expect(authorize.text).toContain('acts as itself');
  });

  test(`revoking one of its tokens ends them all; its next request starts a new grant${suffix}`, async () => {
    const first = (await tokenRequest(t, bot)).body.access_token as string;
    const second = (await tokenRequest(t, bot)).body.access_token as string;
    const grantId = (await t.storage.tokens.find(hashSecret(first)))!.token.grantId;
    expect((await postAs(t, '/oauth/revoke', { token: first }, bot)).status).toBe(200);
    expect((await callRealms(t, first)).status).toBe(401);
    expect((await callRealms(t, second)).status).toBe(401);
    expect((await postAs(t, '/oauth/introspect', { token: second }, bot)).body).toEqual({ active: false });
    const next = (await tokenRequest(t, bot)).body.access_token as string;
    expect((await callRealms(t, next)).status).toBe(200);
    expect((await t.storage.tokens.find(hashSecret(next)))!.token.grantId).not.toBe(grantId);
  });

  test(`disabling the client stops its tokens at once, removing it ends them${suffix}`, async () => {
    const token = (await tokenRequest(t, bot)).body.access_token as string;
    await t.storage.clients.update!('stats-bot', { disabled: true });
    expect((await callRealms(t, token)).status).toBe(401);
    expectOAuthError(await tokenRequest(t, bot), 'invalid_client', 401);
    await t.storage.clients.update!('stats-bot', { disabled: false });
    expect((await callRealms(t, token)).status).toBe(200);
    expect(await t.storage.clients.remove!('stats-bot')).toBe(true);
    expect((await callRealms(t, token)).status).toBe(401);
    // Registered again under the same id, it starts with no grant: the old token stays dead.
    const again = await registerClient(t.storage, {
      applicationName: 'Stats crawler',
      grantType: 'client_credentials',
      clientId: 'stats-bot',
      scopes: ['stats'],
    });
    const fresh = (await tokenRequest(t, { clientId: 'stats-bot', clientSecret: again.clientSecret! })).body;
    expect((await callRealms(t, fresh.access_token)).status).toBe(200);
    expect((await callRealms(t, token)).status).toBe(401);
  });

  test(`no member sees or revokes the client's own grant${suffix}`, async () => {
    await tokenRequest(t, bot);
    expect(await authorizedApplications(t.server, 'client:stats-bot')).toEqual([]);
    expect(await revokeApplication(t.server, 'client:stats-bot', 'stats-bot')).toBe(false);
    const [grant] = await t.storage.grants.list({ clientId: 'stats-bot' });
    expect(grant!.revokedAt).toBeNull();
  });
});

describe('client credentials and resources (RFC 8707)', () => {
  let t: TestApp;
  afterEach(() => t.close());
  beforeEach(async () => {
    t = await createTestApp({
      scopes: { realms: 'See your realms' },
      resources: [
        { resource: API, name: 'API', default: true },
        { resource: OTHER, name: 'Other API' },
      ],
    });
    mountClientEndpoints(t);
  });

  it('binds the token to the default resource or the one named, and refuses one not allowed', async () => {
    const bot = await registerClient(t.server, {
      applicationName: 'API bot',
      grantType: 'client_credentials',
      scopes: ['realms'],
      resources: [API],
    });
    const credentials = { clientId: bot.clientId, clientSecret: bot.clientSecret! };
    const byDefault = await tokenRequest(t, credentials);
    expect(byDefault.status).toBe(200);
    const introspected = await postAs(
      t,
      '/oauth/introspect',
      { token: byDefault.body.access_token },
      credentials,
    );
    expect(introspected.body).toMatchObject({ aud: API, subject_kind: 'client' });
    expect((await callRealms(t, byDefault.body.access_token)).status).toBe(200);
    const named = await tokenRequest(t, credentials, { resource: 'https://api.example' });
    expect(named.status).toBe(200);
    // A declared resource the client may not use, one not declared, a malformed one, two at once.
    expectOAuthError(await tokenRequest(t, credentials, { resource: OTHER }), 'invalid_target');
    expectOAuthError(
      await tokenRequest(t, credentials, { resource: 'https://evil.example/' }),
      'invalid_target',
    );
    expectOAuthError(await tokenRequest(t, credentials, { resource: 'not a uri' }), 'invalid_target');
    const twice = await t.agent
      .post('/oauth/token')
      .type('form')
      .send(
        `grant_type=client_credentials&resource=${encodeURIComponent(API)}&resource=${encodeURIComponent(API)}`,
      )
      .set('Authorization', basicAuth(credentials.clientId, credentials.clientSecret));
    expectOAuthError(twice, 'invalid_target');
  });
});

describe('registering a client credentials client', () => {
  let storage: Storage;
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({
      oidc: { keySecret: 'an-oidc-key-secret-of-at-least-32-chars' },
      scopes: { realms: 'See your realms' },
    });
    storage = t.storage;
  });
  afterEach(() => t.close());

  it('is confidential, without a redirect URI or team gate, and keeps its grant type', async () => {
    const issued = await registerClient(t.server, {
      applicationName: 'Job',
      grantType: 'client_credentials',
    });
    expect(issued.clientSecret).toEqual(expect.any(String));
    expect(await storage.clients.find(issued.clientId)).toMatchObject({
      redirectUri: '',
      grantType: 'client_credentials',
    });
    const refused = (registration: Partial<Parameters<typeof registerClient>[1]>) =>
      registerClient(t.server, { applicationName: 'Job', grantType: 'client_credentials', ...registration });
    await expect(refused({ public: true })).rejects.toThrow(/cannot be public/);
    await expect(refused({ redirectUri: 'https://job.example/cb' })).rejects.toThrow(/has no redirect URI/);
    await expect(refused({ allowedTeams: ['team-a'] })).rejects.toThrow(/acts for none/);
    await expect(refused({ requirePkce: true })).rejects.toThrow(/authorization_code clients only/);
    await expect(
      updateClient(t.server, issued.clientId, {
        grantType: 'authorization_code',
        redirectUri: 'https://job.example/cb',
      }),
    ).rejects.toThrow(/register a new client/);
    await expect(updateClient(t.server, 'code-client', { grantType: 'client_credentials' })).rejects.toThrow(
      /register a new client/,
    );
    await expect(updateClient(t.server, issued.clientId, { public: true })).rejects.toThrow(
      /cannot be public/,
    );
    expect(await updateClient(t.server, issued.clientId, { scopes: ['realms'] })).toMatchObject({
      scopes: ['realms'],
    });
  });

  it('never grants openid: asked for, it is refused; among the defaults, left out', async () => {
    const issued = await registerClient(t.server, {
      applicationName: 'Job',
      grantType: 'client_credentials',
      scopes: ['openid', 'realms'],
    });
    const credentials = { clientId: issued.clientId, clientSecret: issued.clientSecret! };
    const asked = await tokenRequest(t, credentials, { scope: 'openid realms' });
    expectOAuthError(asked, 'invalid_scope');
    expect(asked.body.error_description).toContain('openid');
    const byDefault = await tokenRequest(t, credentials);
    expect(byDefault.status).toBe(200);
    expect(byDefault.body.scope).toBe('realms');
    expect(byDefault.body.id_token).toBeUndefined();
  });
});

function credentialsOf(credentials: { clientId: string; clientSecret: string }) {
  return { client_id: credentials.clientId, client_secret: credentials.clientSecret };
}
