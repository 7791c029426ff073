/**
 * The `oauth2.1` profile (issue 42): one option that drops what OAuth 2.1 omits. With it, the
 * implicit request, a redirect URI under (not equal to) the registered one, a code request without
 * PKCE and an access token in a query string are each refused with the RFC's error, where the
 * default profile (the service specification's) accepts or ignores them. The flows it keeps pass:
 * the code flow with PKCE here, and the client libraries' flows that run under both profiles
 * (test/clients/refresh.client-libraries.test.ts, test/clients/native-apps.test.ts).
 */
import { createHash } from 'node:crypto';
import express from 'express';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import {
  authorizeRouter,
  createAuthorizationServer,
  registerClient,
  tokenRouter,
  updateClient,
  type AuthorizationServerOptions,
} from '../../../src/index.js';
import {
  CODE_REDIRECT,
  IMPLICIT_REDIRECT,
  createTestApp,
  expectOAuthError,
  redirectParams,
  type TestApp,
} from '../../support/app.js';
import { answerConsent, authorizeWithLogin, exchangeCode, obtainCode } from '../../support/flow.js';
import { callRealms } from '../../support/endpoints.js';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const PKCE = {
  code_challenge: createHash('sha256').update(VERIFIER).digest('base64url'),
  code_challenge_method: 'S256',
};

let t: TestApp;
afterEach(() => t.close());

const start = (profile: 'oauth2' | 'oauth2.1', overrides: Partial<AuthorizationServerOptions> = {}) =>
  createTestApp({ profile, ...overrides }).then((app) => (t = app));

/** An authorization request, answered at once (no login yet): a page or a redirect. */
const authorize = (query: Record<string, string>) => t.agent.get('/oauth/authorize').query(query);

describe('the oauth2.1 profile refuses what OAuth 2.1 omits, each with the RFC error', () => {
  it('the implicit grant: unsupported_response_type at the redirect URI; the default profile starts it', async () => {
    const implicit = {
      response_type: 'token',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
      state: 's',
    };
    await start('oauth2');
    expect((await authorize(implicit)).status).toBe(200);
    await t.close();

    await start('oauth2.1');
    const refused = await authorize(implicit);
    expect(refused.status).toBe(302);
    expect(refused.headers.location!.startsWith(`${IMPLICIT_REDIRECT}#`)).toBe(true);
    expect(redirectParams(refused.headers.location!)).toMatchObject({
      error: 'unsupported_response_type',
      state: 's',
      iss: t.baseUrl,
    });
    // A code client asking for a token is told the same: the server has no such response type.
    const fromCodeClient = await authorize({
      ...implicit,
      client_id: 'code-client',
      redirect_uri: CODE_REDIRECT,
    });
    expect(redirectParams(fromCodeClient.headers.location!).error).toBe('unsupported_response_type');
    // No implicit client registers.
    await expect(
      registerClient(t.server, {
        applicationName: 'SPA',
        grantType: 'implicit',
        redirectUri: 'https://spa.example/',
      }),
    ).rejects.toThrow(/no implicit grant/);
    await expect(updateClient(t.server, 'code-client', { grantType: 'implicit' })).rejects.toThrow(
      /no implicit grant/,
    );
  });

  it('an implicit request begun before a restart with the profile ends refused, at the consent', async () => {
    // The same storage and session secret served by a server with the profile on, in front of the
    // test app's own routers once it is set: a restart with the new option.
    const front: { strict?: express.RequestHandler } = {};
    t = await createTestApp({}, (app) =>
      app.use((req, res, next) => (front.strict ? front.strict(req, res, next) : next())),
    );
    const consent = await authorizeWithLogin(t, {
      response_type: 'token',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
      state: 's',
    });
    expect(consent.status).toBe(200);
    front.strict = authorizeRouter(
      createAuthorizationServer({
        baseUrl: t.baseUrl,
        storage: t.storage,
        providers: [{ name: 'Development provider', identifier: t.provider.identifier }],
        session: { secret: 'a test session secret that is long enough' },
        logger: { warn: () => {}, error: () => {} },
        profile: 'oauth2.1',
      }),
    );
    const answered = await answerConsent(t, consent.text, 'allow');
    expect(answered.headers.location!.startsWith(`${IMPLICIT_REDIRECT}#`)).toBe(true);
    expect(redirectParams(answered.headers.location!)).toMatchObject({
      error: 'unsupported_response_type',
      state: 's',
    });
    expect(await t.storage.grants.list({ clientId: 'implicit-client' })).toEqual([]);
  });

  it('a redirect URI under the registered one: an error page, never a redirect; the default profile accepts it', async () => {
    const prefixed = {
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: `${CODE_REDIRECT}/more?x=1`,
      ...PKCE,
    };
    await start('oauth2');
    expect((await authorize(prefixed)).status).toBe(200);
    await t.close();

    await start('oauth2.1');
    for (const redirectUri of [`${CODE_REDIRECT}/more?x=1`, `${CODE_REDIRECT}?x=1`, `${CODE_REDIRECT}/`]) {
      const refused = await authorize({ ...prefixed, redirect_uri: redirectUri });
      expect(refused.status, redirectUri).toBe(400);
      expect(refused.headers.location, redirectUri).toBeUndefined();
      expect(refused.text).toContain('The redirect_uri is not registered for this client application.');
    }
    expect((await authorize({ ...prefixed, redirect_uri: CODE_REDIRECT })).status).toBe(200);
    // A refresh naming a prefixed redirect URI is refused too.
    const refresh = await t.agent
      .post('/oauth/token')
      .type('form')
      .send({
        grant_type: 'refresh_token',
        refresh_token: 'any',
        client_id: 'code-client',
        client_secret: t.codeClient.clientSecret,
        redirect_uri: `${CODE_REDIRECT}/more`,
      });
    expectOAuthError(refresh, 'invalid_grant');
  });

  it('a code request without PKCE, from a confidential client too: invalid_request at the redirect URI', async () => {
    await start('oauth2');
    expect(
      (await authorize({ response_type: 'code', client_id: 'code-client', redirect_uri: CODE_REDIRECT }))
        .status,
    ).toBe(200);
    await t.close();

    await start('oauth2.1');
    const refused = await authorize({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: CODE_REDIRECT,
      state: 's',
    });
    expect(refused.status).toBe(302);
    expect(redirectParams(refused.headers.location!)).toMatchObject({
      error: 'invalid_request',
      error_description: 'code challenge required',
      state: 's',
    });
    // PKCE's plain method stays refused.
    const plain = await authorize({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: CODE_REDIRECT,
      code_challenge: VERIFIER,
      code_challenge_method: 'plain',
    });
    expect(redirectParams(plain.headers.location!).error).toBe('invalid_request');
  });

  it('a code issued without PKCE before the profile was turned on is not exchanged after', async () => {
    await start('oauth2');
    const { code } = await obtainCode(t);
    // The same storage, served by a server with the profile on (a restart with the new option).
    const strict = createAuthorizationServer({
      baseUrl: t.baseUrl,
      storage: t.storage,
      providers: [{ name: 'Development provider', identifier: t.provider.identifier }],
      session: { secret: 'a test session secret that is long enough' },
      profile: 'oauth2.1',
    });
    const refused = await supertest(express().use(tokenRouter(strict)))
      .post('/oauth/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code,
        client_id: 'code-client',
        client_secret: t.codeClient.clientSecret,
        redirect_uri: CODE_REDIRECT,
      });
    expectOAuthError(refused, 'invalid_grant');
    expect(refused.body.error_description).toBe('This client must use PKCE.');
  });

  it('an access token in the query string: 400 invalid_request with a challenge; the default profile ignores it', async () => {
    await start('oauth2');
    const ignored = await t.agent.get('/v1/realms?access_token=abc');
    expect(ignored.status).toBe(401);
    expect(ignored.headers['www-authenticate']).not.toContain('error=');
    await t.close();

    await start('oauth2.1');
    const tokens = await exchangeCode(t, (await obtainCode(t, PKCE)).code, { code_verifier: VERIFIER });
    const token = tokens.body.access_token as string;
    const inQuery = await t.agent.get(`/v1/realms?access_token=${token}`);
    expect(inQuery.status).toBe(400);
    expect(inQuery.body).toMatchObject({ error: 'invalid_request' });
    expect(inQuery.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]+", error="invalid_request"/);
    // With the header as well, still refused: the URL has leaked it.
    const both = await t.agent
      .get(`/v1/realms?access_token=${token}`)
      .set('Authorization', `Bearer ${token}`);
    expect(both.status).toBe(400);
    expect((await callRealms(t, token)).status).toBe(200);
  });

  it('rotates public clients’ refresh tokens: turning rotation off is refused at start', async () => {
    await start('oauth2.1', { tokens: { rotateRefreshTokens: true } });
    expect(() =>
      createAuthorizationServer({
        baseUrl: t.baseUrl,
        storage: t.storage,
        providers: [{ name: 'Development provider', identifier: t.provider.identifier }],
        session: { secret: 'a test session secret that is long enough' },
        profile: 'oauth2.1',
        tokens: { rotateRefreshTokens: false },
      }),
    ).toThrow(/tokens\.rotateRefreshTokens: false is refused with profile 'oauth2\.1'/);
    expect(() =>
      createAuthorizationServer({
        baseUrl: t.baseUrl,
        storage: t.storage,
        providers: [{ name: 'Development provider', identifier: t.provider.identifier }],
        session: { secret: 'a test session secret that is long enough' },
        profile: 'oauth2.2' as 'oauth2.1',
      }),
    ).toThrow(/profile/);
  });
});

describe('with the oauth2.1 profile', () => {
  it('the metadata says so: code only, S256, no implicit grant', async () => {
    await start('oauth2.1');
    const metadata = (await t.agent.get('/.well-known/oauth-authorization-server')).body;
    expect(metadata.response_types_supported).toEqual(['code']);
    expect(metadata.response_modes_supported).toEqual(['query']);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.grant_types_supported).toEqual([
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:device_code',
    ]);
  });

  it('the code flow with PKCE passes: login, consent, exchange, the API, a refresh', async () => {
    await start('oauth2.1');
    const consent = await authorizeWithLogin(t, {
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: CODE_REDIRECT,
      state: 'st',
      ...PKCE,
    });
    const allowed = await answerConsent(t, consent.text, 'allow');
    const { code, state } = redirectParams(allowed.headers.location!);
    expect(state).toBe('st');
    // The verifier is required, and checked.
    expectOAuthError(await exchangeCode(t, code!), 'invalid_grant');
    const tokens = await exchangeCode(t, code!, { code_verifier: VERIFIER });
    expect(tokens.status).toBe(200);
    expect((await callRealms(t, tokens.body.access_token)).status).toBe(200);
    const refreshed = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: 'code-client',
      client_secret: t.codeClient.clientSecret,
    });
    expect(refreshed.status).toBe(200);
    // A confidential client's refresh token stays (OAuth 2.1 asks rotation of public ones).
    expect(refreshed.body.refresh_token).toBe(tokens.body.refresh_token);
  });
});
