/**
 * OpenID Connect RP-Initiated Logout 1.0 at `GET /oauth/end-session`: the user confirms, the login
 * session ends as the sign-out form ends it, and the browser goes back only to a post-logout
 * redirect URI registered for the relying party the `id_token_hint` names. A hint of another
 * issuer, or signed by a retired key, is refused; nothing is ever redirected to unverified.
 */
import { decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { registerClient, updateClient } from '../../src/index.js';
import { KEY_REFRESH_MS, retireKey, rotateKeys } from '../../src/oidc/keys.js';
import type { MemoryStorage } from '../../src/storage/memory.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin, parseForm, pathOf } from '../support/flow.js';

const KEY_SECRET = 'an-oidc-key-secret-of-at-least-32-chars';
const SIGNED_OUT = 'https://client.example/signed-out';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

let now = Date.now();
let secret: string;

async function start() {
  now = Date.now();
  t = await createTestApp({ oidc: { keySecret: KEY_SECRET }, clock: () => now });
  secret = (
    await registerClient(t.storage, {
      clientId: 'rp',
      applicationName: 'Relying party',
      redirectUri: CODE_REDIRECT,
      scopes: ['openid', 'profile'],
      postLogoutRedirectUris: [SIGNED_OUT],
    })
  ).clientSecret!;
  return t;
}

/** Signs in with openid and resolves the ID token. */
async function idToken(app: TestApp): Promise<string> {
  const query = {
    response_type: 'code',
    client_id: 'rp',
    redirect_uri: CODE_REDIRECT,
    scope: 'openid',
    state: 's',
  };
  let res = await authorizeWithLogin(app, query);
  if (res.status === 200) res = await answerConsent(app, res.text, 'allow');
  const code = new URL(res.headers.location!).searchParams.get('code')!;
  const token = await app.agent
    .post('/oauth/token')
    .type('form')
    .auth('rp', secret)
    .send({ grant_type: 'authorization_code', code, redirect_uri: CODE_REDIRECT });
  expect(token.status).toBe(200);
  return token.body.id_token as string;
}

/** Whether this browser is still signed in: `prompt=none` answers a code, or `login_required`. */
async function signedIn(app: TestApp): Promise<boolean> {
  const res = await app.agent.get('/oauth/authorize').query({
    response_type: 'code',
    client_id: 'rp',
    redirect_uri: CODE_REDIRECT,
    scope: 'openid',
    prompt: 'none',
  });
  return new URL(res.headers.location!).searchParams.has('code');
}

describe('RP-initiated logout', () => {
  it('asks, then signs out and returns to the registered URI with state; a GET alone signs nobody out', async () => {
    const app = await start();
    const hint = await idToken(app);
    const doc = (await app.agent.get('/.well-known/openid-configuration')).body;
    expect(doc.end_session_endpoint).toBe(`${app.baseUrl}/oauth/end-session`);

    const ask = await app.agent
      .get('/oauth/end-session')
      .query({ id_token_hint: hint, post_logout_redirect_uri: SIGNED_OUT, state: 'st 1&2' });
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('Relying party asks you to sign out');
    expect(await signedIn(app)).toBe(true);

    const form = parseForm(ask.text);
    const done = await app.agent
      .post(pathOf(form.action))
      .type('form')
      .set('Origin', new URL(app.baseUrl).origin)
      .send(form.fields);
    expect(done.status).toBe(303);
    const back = new URL(done.headers.location!);
    expect(back.origin + back.pathname).toBe(SIGNED_OUT);
    expect(back.searchParams.get('state')).toBe('st 1&2');
    expect(await signedIn(app)).toBe(false);
  });

  it('nobody signed in: straight back to the registered URI', async () => {
    const app = await start();
    const hint = await idToken(app);
    app.agent = (await import('supertest')).default.agent(app.app);
    const res = await app.agent
      .get('/oauth/end-session')
      .query({ id_token_hint: hint, post_logout_redirect_uri: SIGNED_OUT, state: 'x' });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${SIGNED_OUT}?state=x`);
  });

  it('without a redirect URI: the question, then a page that says the user is signed out', async () => {
    const app = await start();
    await idToken(app);
    const ask = await app.agent.get('/oauth/end-session');
    expect(ask.status).toBe(200);
    const form = parseForm(ask.text);
    const done = await app.agent
      .post(pathOf(form.action))
      .type('form')
      .set('Origin', new URL(app.baseUrl).origin)
      .send(form.fields);
    expect(done.status).toBe(200);
    expect(done.text).toContain('You are signed out');
    expect(await signedIn(app)).toBe(false);
  });

  it('never redirects to an unregistered URI, nor without knowing the application', async () => {
    const app = await start();
    const hint = await idToken(app);
    for (const query of [
      { id_token_hint: hint, post_logout_redirect_uri: 'https://evil.example/' },
      { id_token_hint: hint, post_logout_redirect_uri: `${SIGNED_OUT}/more` },
      { post_logout_redirect_uri: SIGNED_OUT },
      { client_id: 'nobody', post_logout_redirect_uri: SIGNED_OUT },
      { id_token_hint: hint, client_id: 'another', post_logout_redirect_uri: SIGNED_OUT },
      { id_token_hint: hint, post_logout_redirect_uri: [SIGNED_OUT, SIGNED_OUT] },
    ]) {
      const res = await app.agent.get('/oauth/end-session').query(query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.headers.location).toBeUndefined();
    }
    // client_id alone names the application well enough for its own registered URI.
    app.agent = (await import('supertest')).default.agent(app.app);
    const byId = await app.agent
      .get('/oauth/end-session')
      .query({ client_id: 'rp', post_logout_redirect_uri: SIGNED_OUT });
    expect(byId.status).toBe(302);
  });

  it('refuses an id_token_hint of another issuer, a forged one, and one signed by a retired key', async () => {
    const app = await start();
    const hint = await idToken(app);
    const stranger = await generateKeyPair('RS256');
    const foreign = await new SignJWT({ aud: 'rp', sub: 'u' })
      // The kid of a key the server publishes, the signature of another key.
      .setProtectedHeader({ alg: 'RS256', kid: decodeProtectedHeader(hint).kid! })
      .setIssuer(app.baseUrl)
      .sign(stranger.privateKey);
    const otherIssuer = await new SignJWT({ aud: 'rp' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k' })
      .setIssuer('https://elsewhere.example')
      .sign(stranger.privateKey);
    for (const bad of [foreign, otherIssuer, `${hint}x`, 'not-a-jwt']) {
      const res = await app.agent
        .get('/oauth/end-session')
        .query({ id_token_hint: bad, post_logout_redirect_uri: SIGNED_OUT });
      expect(res.status).toBe(400);
      expect(res.text).toContain('not an ID token of this server');
    }

    // Rotate, retire the key that signed the hint, and let the instance read the keys again.
    const storage = app.storage as MemoryStorage;
    const [signing] = (await storage.keys.list()).filter((key) => key.state === 'active');
    await rotateKeys(storage.keys, KEY_SECRET, 'RS256', now);
    await retireKey(storage.keys, signing!.kid, now, true);
    now += KEY_REFRESH_MS;
    const retired = await app.agent
      .get('/oauth/end-session')
      .query({ id_token_hint: hint, post_logout_redirect_uri: SIGNED_OUT });
    expect(retired.status).toBe(400);
  });

  it('post-logout redirect URIs are checked as redirect URIs when registered or changed', async () => {
    const app = await start();
    await expect(
      registerClient(app.storage, {
        applicationName: 'Bad',
        redirectUri: CODE_REDIRECT,
        scopes: ['openid'],
        postLogoutRedirectUris: ['http://evil.example/'],
      }),
    ).rejects.toThrow(/postLogoutRedirectUris "http:\/\/evil\.example\/"/);
    await updateClient(app.storage, 'rp', { postLogoutRedirectUris: [] });
    expect((await app.storage.clients.find('rp'))!.postLogoutRedirectUris ?? []).toEqual([]);
  });
});
