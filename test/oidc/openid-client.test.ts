/**
 * OpenID Connect as a relying party written by others sees it: openid-client 6, unmodified,
 * discovers the provider, runs the code flow with PKCE and a nonce, validates the ID token against
 * the JWKS (signature, `iss`, `aud`, `exp`, `nonce`), reads UserInfo and refreshes. Through the
 * development provider in its plain, Steam and Launchpad shapes, with `sub` and the provider's
 * claims checked. The person's part (login at the provider, consent) is the helpers' browser.
 */
import * as client from 'openid-client';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import {
  connectStorage,
  launchpad,
  registerClient,
  steam,
  type AuthorizationServerOptions,
  type ProviderOptions,
} from '../../src/index.js';
import { startDevelopmentProvider, type ProviderShape } from '../../src/testing/index.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { dropSchema, postgresAvailability, postgresUrlFor, uniqueSchema } from '../support/databases.js';
import { answerConsent, authorizeWithLogin } from '../support/flow.js';

const KEY_SECRET = 'an-oidc-key-secret-of-at-least-32-chars';

let t: TestApp | undefined;
let op: Awaited<ReturnType<typeof startDevelopmentProvider>> | undefined;
/** Closes what a test opened besides the app (a PostgreSQL storage and its schema). */
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await t?.close();
  await op?.close();
  await cleanup?.();
  t = op = cleanup = undefined;
});

const postgres = await postgresAvailability();

/** A test app with OpenID Connect on, its provider shaped as `shape`, and a client for `openid`. */
async function start(shape: ProviderShape, overrides: Partial<AuthorizationServerOptions> = {}) {
  let providers: ProviderOptions[] | undefined;
  if (shape !== 'generic') {
    op = await startDevelopmentProvider({ shape });
    providers = [(shape === 'steam' ? steam : launchpad)({ baseUrl: op.url })];
  }
  t = await createTestApp({ oidc: { keySecret: KEY_SECRET }, ...(providers && { providers }), ...overrides });
  const registered = await registerClient(t.storage, {
    clientId: 'oidc-client',
    applicationName: 'An OpenID Connect app',
    redirectUri: CODE_REDIRECT,
    scopes: ['openid', 'profile', 'realms'],
  });
  const config = await client.discovery(
    new URL(t.baseUrl),
    registered.clientId,
    undefined,
    client.ClientSecretBasic(registered.clientSecret!),
    { execute: [client.allowInsecureRequests] },
  );
  return { t, config, secret: registered.clientSecret! };
}

/** The person's part: log in as `user` and trust the application; the redirect back to it. */
async function browserAuthorizes(app: TestApp, url: URL, user: string): Promise<URL> {
  let res = await authorizeWithLogin(app, Object.fromEntries(url.searchParams), user);
  if (res.status === 200) res = await answerConsent(app, res.text, 'allow');
  expect([302, 303]).toContain(res.status);
  return new URL(res.headers.location!);
}

/** The code flow as an openid-client app runs it; resolves the tokens and the validated claims. */
async function signIn(config: client.Configuration, app: TestApp, user: string, scope = 'openid profile') {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const openid = scope.split(' ').includes('openid');
  const nonce = openid ? client.randomNonce() : undefined;
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: CODE_REDIRECT,
    scope,
    state,
    ...(nonce && { nonce }),
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const tokens = await client.authorizationCodeGrant(config, await browserAuthorizes(app, url, user), {
    pkceCodeVerifier: verifier,
    expectedState: state,
    ...(nonce && { expectedNonce: nonce }),
    idTokenExpected: openid,
  });
  return { tokens, claims: tokens.claims(), nonce };
}

/** The user id the API sees for an access token (`requireBearer`). */
async function apiUser(app: TestApp, accessToken: string): Promise<string> {
  const res = await fetch(`${app.baseUrl}/v1/realms`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  const body = (await res.json()) as { realms: string[] };
  return body.realms[0]!.replace(/^realm-of-/, '');
}

describe('openid-client 6 against a host app on PostgreSQL', () => {
  it.skipIf(!postgres.ok)(
    'Steam-shaped sign-in, the ID token validated, UserInfo and refresh, keys in the database',
    async () => {
      const schema = uniqueSchema('oidc_rp');
      const storage = await connectStorage(postgresUrlFor(schema), { migrate: true });
      cleanup = async () => {
        await storage.close();
        await dropSchema(schema);
      };
      const { t: app, config } = await start('steam', { storage });
      const { tokens, claims } = await signIn(config, app, '76561198000000042');
      const sub = await apiUser(app, tokens.access_token);
      expect(claims).toMatchObject({ iss: app.baseUrl, sub, steam_id: '76561198000000042' });
      expect(await client.fetchUserInfo(config, tokens.access_token, sub)).toEqual({
        sub,
        steam_id: '76561198000000042',
      });
      expect((await client.refreshTokenGrant(config, tokens.refresh_token!)).access_token).toBeTruthy();
      expect((await storage.keys.list()).map((key) => key.state).sort()).toEqual(['active', 'next']);
    },
  );
});

describe('openid-client 6 against the OpenID Connect provider', () => {
  it.each([
    { shape: 'generic' as const, user: 'alice', expected: {} },
    { shape: 'steam' as const, user: '76561198000000042', expected: { steam_id: '76561198000000042' } },
    { shape: 'launchpad' as const, user: 'alice', expected: { preferred_username: 'alice', name: 'Alice' } },
  ])('$shape: discovery, code + PKCE + nonce, the ID token validated, UserInfo, refresh', async (shape) => {
    const before = Math.floor(Date.now() / 1000);
    const { t: app, config } = await start(shape.shape);
    const { tokens, claims, nonce } = await signIn(config, app, shape.user);
    expect(claims).toBeDefined();
    const sub = await apiUser(app, tokens.access_token);
    expect(claims).toMatchObject({
      iss: app.baseUrl,
      sub,
      aud: 'oidc-client',
      azp: 'oidc-client',
      nonce,
      ...shape.expected,
    });
    // The subject is the user id tokens carry, never the claimed identifier.
    expect(sub).not.toContain('http');
    expect(claims!.auth_time).toBeGreaterThanOrEqual(before - 1);
    expect(claims!.auth_time).toBeLessThanOrEqual(claims!.iat);
    expect(claims!.exp - claims!.iat).toBe(3600);

    const userinfo = await client.fetchUserInfo(config, tokens.access_token, sub);
    expect(userinfo).toEqual({ sub, ...shape.expected });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(await apiUser(app, refreshed.access_token)).toBe(sub);
  });

  it('the same identity keeps its sub across logins; another identity gets another', async () => {
    const { t: app, config } = await start('steam');
    const first = await signIn(config, app, '76561198000000042');
    app.agent = supertest.agent(app.app); // another browser: a new login
    const again = await signIn(config, app, '76561198000000042');
    expect(again.claims!.sub).toBe(first.claims!.sub);
    app.agent = supertest.agent(app.app);
    const other = await signIn(config, app, '76561198000000043');
    expect(other.claims!.sub).not.toBe(first.claims!.sub);
    expect(other.claims!.steam_id).toBe('76561198000000043');
  });

  it('without openid: no ID token, and UserInfo refuses the token with insufficient_scope', async () => {
    const { t: app, config, secret } = await start('generic');
    // An OAuth 2.0 client of the same provider (openid-client's oauth2 mode expects no ID token).
    const oauth = await client.discovery(
      new URL(app.baseUrl),
      config.clientMetadata().client_id,
      undefined,
      client.ClientSecretBasic(secret),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
    );
    const { tokens } = await signIn(oauth, app, 'alice', 'realms');
    expect(tokens.id_token).toBeUndefined();
    const res = await fetch(`${app.baseUrl}/oauth/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
  });

  it('UserInfo without a token, or with an unknown one, is 401 with a Bearer challenge', async () => {
    const { t: app } = await start('generic');
    const none = await fetch(`${app.baseUrl}/oauth/userinfo`, { method: 'POST' });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    const unknown = await fetch(`${app.baseUrl}/oauth/userinfo`, {
      headers: { authorization: 'Bearer nope' },
    });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('a nonce and a state of 1 KB with odd characters come back as sent', async () => {
    const { t: app, config } = await start('generic');
    const nonce = `${'ü &=+/?#%~'.repeat(100)}${'x'.repeat(24)}`;
    const state = `${'"<>\\\'é;,'.repeat(128)}`.slice(0, 1024);
    expect(nonce.length).toBe(1024);
    expect(state.length).toBe(1024);
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: CODE_REDIRECT,
      scope: 'openid',
      nonce,
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const tokens = await client.authorizationCodeGrant(config, await browserAuthorizes(app, url, 'alice'), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    expect(tokens.claims()!.nonce).toBe(nonce);
  });

  it("oidc.claims adds the host's own claims to the ID token and UserInfo, by scope; reserved names stay the issuer's", async () => {
    const asked: string[][] = [];
    const { t: app, config } = await start('generic', {
      oidc: {
        keySecret: KEY_SECRET,
        claims: async (subject, scopes) => {
          asked.push([...scopes]);
          return {
            email: `${subject}@host.example`,
            sub: 'someone-else',
            iss: 'https://evil.example',
            ...(scopes.includes('profile') ? { website: 'https://host.example/u' } : {}),
          };
        },
      },
    });
    const { tokens, claims } = await signIn(config, app, 'alice', 'openid');
    const sub = await apiUser(app, tokens.access_token);
    expect(claims).toMatchObject({ sub, iss: app.baseUrl, email: `${sub}@host.example` });
    expect(claims).not.toHaveProperty('website');
    expect(await client.fetchUserInfo(config, tokens.access_token, sub)).toEqual({
      sub,
      email: `${sub}@host.example`,
    });
    expect(asked).toEqual([['openid'], ['openid']]);
  });
});
