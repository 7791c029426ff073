/**
 * The developer page (issue 40) as a relying party's developer meets it: a member signs in on the
 * page, creates an application through its forms, copies the client id (and the secret, once) and
 * the issuer it shows, and openid-client 6, unmodified, runs discovery, the code flow with PKCE and
 * a refresh with them. A confidential web application (with OpenID Connect on and off) and a
 * public native app redirecting to its loopback listener on a port of its choosing (RFC 8252 7.3).
 * The person's part (the provider's sign-in, the consent page) is the supertest browser's.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../support/app.js';
import {
  WEB_APP,
  createApp,
  credentialsOf,
  mountDeveloperPage,
  signInAsMember,
  type AppFields,
} from '../../support/developers.js';
import { answerConsent, pathOf } from '../../support/flow.js';

const KEY_SECRET = 'an-oidc-key-secret-of-at-least-32-chars';
const SCOPES = { realms: 'See your realms', profile: 'See your profile' };

let t: TestApp | undefined;
let loopback: Server | undefined;
afterEach(async () => {
  loopback?.closeAllConnections();
  await new Promise<void>((resolve) => (loopback ? loopback.close(() => resolve()) : resolve()));
  await t?.close();
  t = loopback = undefined;
});

/** A test app with the developer page mounted, and alice signed in on it. */
async function developerPage(oidc: boolean): Promise<TestApp> {
  t = await createTestApp({ scopes: SCOPES, ...(oidc ? { oidc: { keySecret: KEY_SECRET } } : {}) });
  mountDeveloperPage(t);
  await signInAsMember(t, 'alice');
  return t;
}

/** What the page that answers the create form tells the developer: the ids and the issuer. */
async function createdOnThePage(app: TestApp, fields: AppFields) {
  const { res } = await createApp(app, fields);
  expect(res.status).toBe(200);
  expect(res.text).toContain(`${fields.name} was created.`);
  const issuer = /<dt>Issuer<\/dt>\s*<dd>([^<]+)<\/dd>/.exec(res.text)?.[1];
  expect(issuer, 'the page shows the issuer').toBe(app.baseUrl);
  return { ...credentialsOf(res.text), issuer: issuer! };
}

/**
 * The person's part: the browser (signed in already on the developer page) opens the
 * authorization URL, sees the consent page of a member's application and trusts it; resolves
 * where the server sends it back to.
 */
async function browserTrusts(app: TestApp, url: URL, applicationName: string): Promise<string> {
  expect(url.origin).toBe(app.baseUrl);
  const consent = await app.agent.get(pathOf(url.href));
  expect(consent.status).toBe(200);
  expect(consent.text).toContain(`Do you trust ${applicationName}?`);
  expect(consent.text).toMatch(
    /Made by <strong><bdi>[^<]*\/user\/alice<\/bdi><\/strong>, a member of this site/,
  );
  expect(consent.text).toContain('The operator has not verified it');
  const decided = await answerConsent(app, consent.text, 'allow');
  expect(decided.status).toBe(303);
  return decided.headers.location!;
}

/** The user id the API sees for an access token (`requireBearer`), or the status it answers. */
async function apiUser(app: TestApp, accessToken: string): Promise<string> {
  const res = await fetch(`${app.baseUrl}/v1/realms`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { realms: string[] }).realms[0]!.replace(/^realm-of-/, '');
}

describe('openid-client 6 with a confidential web application a member created on the page', () => {
  it.each([
    { oidc: false, scope: 'realms', fields: { ...WEB_APP } },
    { oidc: true, scope: 'openid realms', fields: { ...WEB_APP, scopes: ['openid', 'realms'] } },
  ])(
    'OpenID Connect $oidc: discovery, code + PKCE with the secret the page showed once, then a refresh',
    async ({ oidc, scope, fields }) => {
      const app = await developerPage(oidc);
      const { clientId, clientSecret, issuer } = await createdOnThePage(app, fields);
      expect(clientSecret).toBeDefined();

      const config = await client.discovery(
        new URL(issuer),
        clientId,
        undefined,
        client.ClientSecretBasic(clientSecret!),
        { ...(oidc ? {} : { algorithm: 'oauth2' as const }), execute: [client.allowInsecureRequests] },
      );
      expect(config.serverMetadata().token_endpoint).toBe(`${app.baseUrl}/oauth/token`);
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = oidc ? client.randomNonce() : undefined;
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: fields.redirect_uri!,
        scope,
        state,
        ...(nonce && { nonce }),
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      const back = await browserTrusts(app, url, fields.name!);
      expect(back.startsWith(`${fields.redirect_uri}?`)).toBe(true);

      const tokens = await client.authorizationCodeGrant(config, new URL(back), {
        pkceCodeVerifier: verifier,
        expectedState: state,
        ...(nonce && { expectedNonce: nonce }),
        idTokenExpected: oidc,
      });
      expect(tokens).toMatchObject({ token_type: 'bearer', scope });
      const sub = await apiUser(app, tokens.access_token);
      if (oidc) {
        expect(tokens.claims()).toMatchObject({ iss: app.baseUrl, aud: clientId, sub, nonce });
      } else {
        expect(tokens.id_token).toBeUndefined();
      }

      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      // A confidential client's refresh token stays (rotateRefreshTokens: 'public-clients').
      expect(refreshed.refresh_token ?? tokens.refresh_token).toBe(tokens.refresh_token);
      expect(await apiUser(app, refreshed.access_token)).toBe(sub);

      // The developer page counts the member who trusted it.
      const list = await app.agent.get('/developers');
      expect(list.text).toContain(fields.name!);
      expect(list.text).toContain('1 member authorized it');
    },
  );
});

describe('openid-client 6 with a public native app a member created on the page', () => {
  it('a loopback redirect on the port the app chose, PKCE and no client authentication; then a refresh', async () => {
    const app = await developerPage(false);
    const { clientId, clientSecret, issuer } = await createdOnThePage(app, {
      name: 'Realm CLI',
      kind: 'native',
      client_type: 'public',
      redirect_uri: 'http://127.0.0.1/callback',
      scopes: ['realms'],
    });
    expect(clientSecret).toBeUndefined();

    // The native app listens on a loopback port of its own choosing, and keeps what arrives.
    const arrived: URL[] = [];
    loopback = createServer((req, res) => {
      arrived.push(new URL(req.url!, `http://127.0.0.1:${(loopback!.address() as AddressInfo).port}`));
      res.setHeader('content-type', 'text/plain');
      res.end('Signed in: you can close this window.');
    });
    await new Promise<void>((resolve) => loopback!.listen(0, '127.0.0.1', resolve));
    const redirectUri = `http://127.0.0.1:${(loopback.address() as AddressInfo).port}/callback`;

    const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), {
      algorithm: 'oauth2',
      execute: [client.allowInsecureRequests],
    });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'realms',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const back = await browserTrusts(app, url, 'Realm CLI');
    expect(back.startsWith(`${redirectUri}?`)).toBe(true);
    // The browser follows the redirect to the app's listener.
    expect((await fetch(back)).status).toBe(200);
    expect(arrived).toHaveLength(1);

    const tokens = await client.authorizationCodeGrant(config, arrived[0]!, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.scope).toBe('realms');
    const sub = await apiUser(app, tokens.access_token);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    // A public client's refresh token rotates: the old one is spent.
    expect(refreshed.refresh_token).toBeDefined();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(await apiUser(app, refreshed.access_token)).toBe(sub);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });
});
