/**
 * Native apps (RFC 8252): public code clients without a secret, PKCE required, loopback redirects
 * on any port and private-use URI schemes, refresh tokens rotated. openid-client 6, unmodified, is
 * the native app: it listens on an ephemeral loopback port, as a desktop app or a CLI that opens
 * the browser does; the person's part (sign-in, consent) is the test's browser. Its flow runs with
 * the `oauth2.1` profile too (issue 42): exact redirect URIs keep the loopback port free.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerClient, updateClient } from '../../src/index.js';
import { pkceRequired } from '../../src/rules/client-kind.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin } from '../support/flow.js';

let t: TestApp;
let listener: Server | undefined;
/** The server's profile: the default, unless a suite sets another. */
let profile: 'oauth2' | 'oauth2.1' = 'oauth2';
beforeEach(async () => {
  t = await createTestApp({ scopes: { realms: 'See your realms' }, profile });
  await registerClient(t.storage, {
    clientId: 'desktop-app',
    applicationName: 'Realm Desktop',
    redirectUri: 'http://127.0.0.1/callback',
    public: true,
    scopes: ['realms'],
  });
});
afterEach(async () => {
  listener?.close();
  listener = undefined;
  await t.close();
});

/**
 * The app's loopback listener on a port the system chooses: resolves its redirect URI and the
 * first request it receives (the browser's redirect back with the code).
 */
async function loopbackListener(host = '127.0.0.1') {
  let received!: (url: URL) => void;
  const arrived = new Promise<URL>((resolve) => (received = resolve));
  let origin = '';
  listener = createServer((req, res) => {
    received(new URL(req.url!, origin));
    res.end('You can close this window.');
  });
  await new Promise<void>((resolve) => listener!.listen(0, host, resolve));
  origin = `http://${host}:${(listener.address() as AddressInfo).port}`;
  return { redirectUri: `${origin}/callback`, arrived };
}

/** The person signs in and trusts the app; resolves where the browser is sent back. */
async function personAuthorizes(url: URL): Promise<string> {
  let res = await authorizeWithLogin(t, Object.fromEntries(url.searchParams));
  if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
  expect([302, 303]).toContain(res.status);
  return res.headers.location!;
}

describe.each(['oauth2', 'oauth2.1'] as const)(
  'a public native app with openid-client 6 (profile %s)',
  (used) => {
    beforeAll(() => void (profile = used));
    afterAll(() => void (profile = 'oauth2'));
    it('gets a token on an ephemeral loopback port with PKCE, and its refresh token rotates', async () => {
      expect(t.server.options.profile).toBe(used);
      const config = await client.discovery(new URL(t.baseUrl), 'desktop-app', undefined, client.None(), {
        algorithm: 'oauth2',
        execute: [client.allowInsecureRequests],
      });
      expect(config.serverMetadata().token_endpoint_auth_methods_supported).toContain('none');
      const app = await loopbackListener();
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: app.redirectUri,
        scope: 'realms',
        state,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      const back = await personAuthorizes(url);
      expect(back.startsWith(`${app.redirectUri}?`)).toBe(true);
      // The browser follows the redirect to the app's own listener.
      await fetch(back);
      const callback = await app.arrived;
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
      });
      expect(tokens.token_type).toBe('bearer');
      const api = await fetch(`${t.baseUrl}/v1/realms`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(api.status).toBe(200);

      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      expect(refreshed.refresh_token).toBeTruthy();
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      // The replaced token presented again has leaked: the grant ends, the new tokens with it.
      await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
      await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
    });
  },
);

describe('public code clients (RFC 8252)', () => {
  it('asks the person at every authorization, even once trusted: any local program can send the public client_id', async () => {
    const challenge = {
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    };
    const query = (port: number) => ({
      response_type: 'code',
      client_id: 'desktop-app',
      redirect_uri: `http://127.0.0.1:${port}/callback`,
      ...challenge,
    });
    let first = await authorizeWithLogin(t, query(5000));
    expect(first.text).toContain('You will be asked each time it signs in.');
    first = await answerConsent(t, first.text, 'allow');
    expect(first.status).toBe(303);
    const again = await t.agent.get('/oauth/authorize').query(query(6666));
    expect(again.status).toBe(200);
    expect(again.text).toContain('name="decision"');
  });

  const authorize = (query: Record<string, string>) =>
    t.agent.get('/oauth/authorize').query({ response_type: 'code', client_id: 'desktop-app', ...query });

  it('a public client with a claimed https redirect (the app is identified) is asked once, as usual', async () => {
    await registerClient(t.storage, {
      clientId: 'universal-link-app',
      applicationName: 'Linked app',
      redirectUri: 'https://app.example/oauth',
      public: true,
      scopes: ['realms'],
    });
    const query = {
      response_type: 'code',
      client_id: 'universal-link-app',
      redirect_uri: 'https://app.example/oauth',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    };
    const first = await authorizeWithLogin(t, query);
    expect(first.text).toContain('You will not be asked again');
    await answerConsent(t, first.text, 'allow');
    const again = await t.agent.get('/oauth/authorize').query(query);
    expect(again.status).toBe(302);
    expect(again.headers.location).toMatch(/^https:\/\/app\.example\/oauth\?code=/);
  });

  it('must use PKCE: a request without a challenge goes back with invalid_request', async () => {
    const res = await authorize({ redirect_uri: 'http://127.0.0.1:50123/callback', state: 's' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location!);
    expect(location.origin).toBe('http://127.0.0.1:50123');
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toBe('code challenge required');
  });

  it('may name any port of its loopback IP literal, but not another host, path or scheme', async () => {
    const challenge = {
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    };
    for (const ok of [
      'http://127.0.0.1:1/callback',
      'http://127.0.0.1:65535/callback',
      'http://127.0.0.1/callback',
    ]) {
      const res = await authorize({ redirect_uri: ok, ...challenge });
      expect(res.status, ok).toBe(200);
    }
    for (const bad of [
      'http://127.0.0.2:5000/callback',
      'http://localhost:5000/callback',
      'http://[::1]:5000/callback',
      'http://127.0.0.1:5000/other',
      'https://127.0.0.1:5000/callback',
      'http://127.0.0.1:99999/callback',
      'http://127.0.0.1:5000@evil.example/callback',
      'http://127.0.0.1:05000/callback',
    ]) {
      const res = await authorize({ redirect_uri: bad, ...challenge });
      expect(res.status, bad).toBe(400);
      expect(res.headers.location, bad).toBeUndefined();
    }
  });

  it('IPv6 loopback too; localhost and confidential clients keep the exact rule', async () => {
    await registerClient(t.storage, {
      clientId: 'v6-app',
      applicationName: 'V6',
      redirectUri: 'http://[::1]/cb',
      public: true,
      scopes: ['realms'],
    });
    await registerClient(t.storage, {
      clientId: 'localhost-app',
      applicationName: 'Localhost',
      redirectUri: 'http://localhost:8080/cb',
      public: true,
      scopes: ['realms'],
    });
    await registerClient(t.storage, {
      clientId: 'server-app',
      applicationName: 'Server on loopback',
      redirectUri: 'http://127.0.0.1:8080/cb',
      scopes: ['realms'],
    });
    const status = async (clientId: string, redirectUri: string) =>
      (
        await t.agent.get('/oauth/authorize').query({
          response_type: 'code',
          client_id: clientId,
          redirect_uri: redirectUri,
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })
      ).status;
    expect(await status('v6-app', 'http://[::1]:4711/cb')).toBe(200);
    expect(await status('localhost-app', 'http://localhost:8080/cb')).toBe(200);
    expect(await status('localhost-app', 'http://localhost:8081/cb')).toBe(400);
    expect(await status('server-app', 'http://127.0.0.1:8080/cb')).toBe(200);
    expect(await status('server-app', 'http://127.0.0.1:8081/cb')).toBe(400);
  });

  it('private-use URI schemes: reverse-domain names, for public code clients only', async () => {
    await registerClient(t.storage, {
      clientId: 'mobile-app',
      applicationName: 'Realm Mobile',
      redirectUri: 'com.example.realms:/oauth2redirect',
      public: true,
      scopes: ['realms'],
    });
    const confidential = registerClient(t.storage, {
      applicationName: 'X',
      redirectUri: 'com.example.realms:/oauth2redirect',
      scopes: ['realms'],
    });
    await expect(confidential).rejects.toThrow(/only a public code client/);
    for (const bad of [
      'myapp:/cb',
      'javascript:alert(1)',
      'file:///etc/passwd',
      'com.example.realms:/cb?x=1',
    ]) {
      await expect(
        registerClient(t.storage, {
          applicationName: 'X',
          redirectUri: bad,
          public: true,
          scopes: ['realms'],
        }),
        bad,
      ).rejects.toThrow(TypeError);
    }
    const verifier = client.randomPKCECodeVerifier();
    let res = await authorizeWithLogin(t, {
      response_type: 'code',
      client_id: 'mobile-app',
      redirect_uri: 'com.example.realms:/oauth2redirect',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
    const location = new URL(res.headers.location!);
    expect(location.protocol).toBe('com.example.realms:');
    const token = await t.agent
      .post('/oauth/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: location.searchParams.get('code')!,
        client_id: 'mobile-app',
        redirect_uri: 'com.example.realms:/oauth2redirect',
        code_verifier: verifier,
      });
    expect(token.status).toBe(200);
  });

  it('has no secret: one presented fails, and switching kinds drops or issues one', async () => {
    const presented = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: 'desktop-app',
      client_secret: 'guess',
    });
    expect(presented.status).toBe(401);
    expect(presented.body.error).toBe('invalid_client');
    const confidential = await updateClient(t.storage, 'desktop-app', { public: false });
    expect(confidential.clientSecret).toBeTruthy();
    expect(confidential.secretHash).not.toBeNull();
    const again = await updateClient(t.storage, 'desktop-app', { public: true });
    expect(again.clientSecret).toBeUndefined();
    expect(again.secretHash).toBeNull();
    expect(pkceRequired(again)).toBe(true);
    await expect(updateClient(t.storage, 'desktop-app', { requirePkce: false })).rejects.toThrow(
      /always uses PKCE/,
    );
  });
});
