/**
 * The whole flow (code with PKCE, refresh, introspection, revocation) driven by client libraries
 * written by others, used as a client application uses them, nothing added to their requests:
 * openid-client 6, simple-oauth2 5 and passport-oauth2 1.8. None of them sends `redirect_uri` with
 * a refresh (RFC 6749 section 6 defines none), which the server used to refuse with
 * `invalid_request`. A `redirect_uri` that is sent is still checked, and
 * `tokens.requireRedirectUriOnRefresh` restores the strict requirement.
 *
 * The person's part (login at the development provider, consent) is the helpers' browser.
 * openid-client's and simple-oauth2's flows run with the `oauth2.1` profile too (issue 42): PKCE
 * everywhere, exact redirect URIs.
 */
import express from 'express';
import session from 'express-session';
import * as client from 'openid-client';
import { Passport } from 'passport';
import { Strategy as OAuth2Strategy } from 'passport-oauth2';
import { AuthorizationCode } from 'simple-oauth2';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuthorizationServerOptions } from '../../src/index.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { mountClientEndpoints } from '../support/endpoints.js';
import { answerConsent, authorizeWithLogin, refreshWith } from '../support/flow.js';

let t: TestApp;
afterEach(() => t?.close());

async function start(overrides: Partial<AuthorizationServerOptions> = {}) {
  t = await createTestApp(overrides);
  mountClientEndpoints(t);
  return t;
}

/** The person's part: log in and trust the application; resolves the redirect to the client. */
async function browserAuthorizes(authorizationUrl: string): Promise<URL> {
  const query = Object.fromEntries(new URL(authorizationUrl).searchParams);
  let res = await authorizeWithLogin(t, query);
  if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
  expect([302, 303]).toContain(res.status);
  return new URL(res.headers.location!);
}

/** What the API says about an access token: 200 while it works, 401 after. */
const apiStatus = async (accessToken: string) =>
  (await fetch(`${t.baseUrl}/v1/realms`, { headers: { authorization: `Bearer ${accessToken}` } })).status;

const PROFILES = ['oauth2', 'oauth2.1'] as const;

describe.each(PROFILES)('openid-client 6 (profile %s)', (profile) => {
  it('code with PKCE, refresh without redirect_uri, introspection, revocation', async () => {
    await start({ profile });
    const config = await client.discovery(
      new URL(t.baseUrl),
      t.codeClient.clientId,
      undefined,
      client.ClientSecretPost(t.codeClient.clientSecret),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
    );
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: CODE_REDIRECT,
      scope: 'realms',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const tokens = await client.authorizationCodeGrant(config, await browserAuthorizes(url.href), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(await apiStatus(tokens.access_token)).toBe(200);

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(await apiStatus(refreshed.access_token)).toBe(200);

    expect(await client.tokenIntrospection(config, refreshed.access_token)).toMatchObject({
      active: true,
      client_id: t.codeClient.clientId,
      scope: 'realms',
    });
    await client.tokenRevocation(config, refreshed.access_token);
    expect(await client.tokenIntrospection(config, refreshed.access_token)).toMatchObject({ active: false });
    expect(await apiStatus(refreshed.access_token)).toBe(401);
  });
});

describe.each(PROFILES)('simple-oauth2 5 (profile %s)', (profile) => {
  it('code with PKCE, refresh without redirect_uri, revocation (it has no introspection)', async () => {
    await start({ profile });
    const oauth = new AuthorizationCode({
      client: { id: t.codeClient.clientId, secret: t.codeClient.clientSecret },
      auth: {
        tokenHost: t.baseUrl,
        tokenPath: '/oauth/token',
        authorizePath: '/oauth/authorize',
        revokePath: '/oauth/revoke',
      },
    });
    const verifier = client.randomPKCECodeVerifier();
    const authorizationUrl = oauth.authorizeURL({
      redirect_uri: CODE_REDIRECT,
      scope: 'realms',
      state: 'simple-state',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    } as Parameters<typeof oauth.authorizeURL>[0]);
    const callback = await browserAuthorizes(authorizationUrl);
    expect(callback.searchParams.get('state')).toBe('simple-state');
    const accessToken = await oauth.getToken({
      code: callback.searchParams.get('code')!,
      redirect_uri: CODE_REDIRECT,
      code_verifier: verifier,
    } as Parameters<typeof oauth.getToken>[0]);
    const first = accessToken.token.access_token as string;
    expect(await apiStatus(first)).toBe(200);

    const refreshed = await accessToken.refresh();
    const second = refreshed.token.access_token as string;
    expect(second).not.toBe(first);
    expect(await apiStatus(second)).toBe(200);

    // The revocation takes effect, and simple-oauth2, which parses every answer as JSON, resolves
    // (an empty 200 made it throw "The content-type is not JSON compatible" after the fact).
    const revocation = await refreshed.revoke('access_token').then(
      () => 'ok',
      (err: Error) => `threw: ${err.message}`,
    );
    expect(await apiStatus(second)).toBe(401);
    expect(revocation).toBe('ok');
  });
});

describe('passport-oauth2 1.8', () => {
  it('code with PKCE through a client app, then a refresh as passport-oauth2-refresh does it', async () => {
    await start();
    const passport = new Passport();
    const received: { accessToken?: string; refreshToken?: string } = {};
    const strategy = new OAuth2Strategy(
      {
        authorizationURL: `${t.baseUrl}/oauth/authorize`,
        tokenURL: `${t.baseUrl}/oauth/token`,
        clientID: t.codeClient.clientId,
        clientSecret: t.codeClient.clientSecret,
        callbackURL: CODE_REDIRECT,
        scope: 'realms',
        state: true,
        pkce: true,
      },
      (accessToken: string, refreshToken: string, _profile: unknown, done: (e: null, u: object) => void) => {
        Object.assign(received, { accessToken, refreshToken });
        done(null, { id: 'alice' });
      },
    );
    passport.use('bridge', strategy);
    const clientApp = express();
    clientApp.use(session({ secret: 'client app secret', resave: false, saveUninitialized: true }));
    clientApp.get('/login', passport.authenticate('bridge', { session: false }));
    clientApp.get('/cb', passport.authenticate('bridge', { session: false }), (_req, res) => {
      res.send('signed in');
    });
    const browserAtClient = supertest.agent(clientApp);

    const login = await browserAtClient.get('/login');
    expect(login.status).toBe(302);
    const authorizationUrl = new URL(login.headers.location!);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    const callback = await browserAuthorizes(authorizationUrl.href);
    // The browser follows the redirect to the client app, whose callback route is /cb.
    const signedIn = await browserAtClient.get(`/cb${callback.search}`);
    expect(signedIn.text, signedIn.text).toBe('signed in');
    expect(await apiStatus(received.accessToken!)).toBe(200);

    const refreshed = await new Promise<string>((resolve, reject) => {
      // passport-oauth2-refresh's call: the strategy's OAuth2 client, grant_type refresh_token.
      (
        strategy as unknown as {
          _oauth2: {
            getOAuthAccessToken(
              code: string,
              params: Record<string, string>,
              cb: (err: unknown, accessToken?: string) => void,
            ): void;
          };
        }
      )._oauth2.getOAuthAccessToken(received.refreshToken!, { grant_type: 'refresh_token' }, (err, token) =>
        err ? reject(new Error(JSON.stringify(err))) : resolve(token!),
      );
    });
    expect(refreshed).not.toBe(received.accessToken);
    expect(await apiStatus(refreshed)).toBe(200);
  });
});

describe('redirect_uri on a refresh', () => {
  async function tokens() {
    let res = await authorizeWithLogin(t, {
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      state: 's',
    });
    if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
    const code = new URL(res.headers.location!).searchParams.get('code')!;
    const exchanged = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CODE_REDIRECT,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
    });
    return exchanged.body as { refresh_token: string };
  }

  it('is optional, and still checked when sent', async () => {
    await start();
    const { refresh_token } = await tokens();
    const without = await refreshWith(t, refresh_token, { redirect_uri: undefined as never });
    expect(without.status).toBe(200);
    const wrong = await refreshWith(t, refresh_token, { redirect_uri: 'https://evil.example/cb' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ error: 'invalid_grant' });
    expect((await refreshWith(t, refresh_token)).status).toBe(200);
  });

  it('is required again with tokens.requireRedirectUriOnRefresh', async () => {
    await start({ tokens: { requireRedirectUriOnRefresh: true } });
    const { refresh_token } = await tokens();
    const without = await refreshWith(t, refresh_token, { redirect_uri: undefined as never });
    expect(without.status).toBe(400);
    expect(without.body).toMatchObject({ error: 'invalid_request' });
    expect((await refreshWith(t, refresh_token)).status).toBe(200);
  });
});
