/**
 * `id_token_hint` (OpenID Connect Core 3.1.2.1) at the authorization endpoint: only the user the
 * hint names counts as signed in for the request. A relying party asking about alice's session
 * with `prompt=none` learns `login_required` when bob is signed in in that browser, never gets a
 * code for bob; without `prompt=none` the person is asked to sign in. A hint this server did not
 * sign is refused. And the bound of a hint (issue 38): every ID token this server issues, a long
 * nonce and the host's claims included, goes back through both endpoints that take a hint.
 */
import { decodeJwt, generateKeyPair, SignJWT } from 'jose';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { registerClient, type AuthorizationServerOptions } from '../../src/index.js';
import { MAX_ID_TOKEN_LENGTH } from '../../src/oidc/id-token.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin, parseForm, pathOf } from '../support/flow.js';

const KEY_SECRET = 'an-oidc-key-secret-of-at-least-32-chars';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

let secret: string;

async function start(oidc: NonNullable<AuthorizationServerOptions['oidc']> = { keySecret: KEY_SECRET }) {
  t = await createTestApp({ oidc });
  secret = (
    await registerClient(t.storage, {
      clientId: 'rp',
      applicationName: 'Relying party',
      redirectUri: CODE_REDIRECT,
      scopes: ['openid', 'profile'],
      postLogoutRedirectUris: ['https://client.example/signed-out'],
    })
  ).clientSecret!;
  return t;
}

const query = (extra: Record<string, string> = {}) => ({
  response_type: 'code',
  client_id: 'rp',
  redirect_uri: CODE_REDIRECT,
  scope: 'openid',
  state: 'st',
  ...extra,
});

/** Another browser on the same app, with cookies of its own. */
const browser = (app: TestApp): TestApp => ({ ...app, agent: supertest.agent(app.baseUrl) });

/** Signs `user` in in `app`'s browser and trusts the client: resolves their ID token. */
async function signIn(app: TestApp, user: string, extra: Record<string, string> = {}): Promise<string> {
  const token = await signInAndExchange(app, user, extra);
  expect(token.status).toBe(200);
  return token.body.id_token as string;
}

/** Signs `user` in, trusts the client, and exchanges the code: resolves the token endpoint's answer. */
async function signInAndExchange(app: TestApp, user: string, extra: Record<string, string> = {}) {
  let res = await authorizeWithLogin(app, query(extra), user);
  if (res.status === 200) res = await answerConsent(app, res.text, 'allow');
  const code = new URL(res.headers.location!).searchParams.get('code')!;
  return app.agent
    .post('/oauth/token')
    .type('form')
    .auth('rp', secret)
    .send({ grant_type: 'authorization_code', code, redirect_uri: CODE_REDIRECT });
}

/** The parameters of the redirect back to the client. */
function back(res: { status: number; headers: Record<string, string> }): URLSearchParams {
  expect(res.status).toBe(302);
  const url = new URL(res.headers.location!);
  expect(url.origin + url.pathname).toBe(CODE_REDIRECT);
  return url.searchParams;
}

describe('id_token_hint at the authorization endpoint', () => {
  it("prompt=none about alice while bob is signed in: login_required, never bob's code", async () => {
    const app = await start();
    const aliceHint = await signIn(app, 'alice');
    const bobs = browser(app);
    const bobHint = await signIn(bobs, 'bob');
    expect(decodeJwt(aliceHint).sub).not.toBe(decodeJwt(bobHint).sub);

    const about = await bobs.agent
      .get('/oauth/authorize')
      .query(query({ prompt: 'none', id_token_hint: aliceHint }));
    const params = back(about);
    expect(Object.fromEntries(params)).toMatchObject({
      error: 'login_required',
      state: 'st',
      iss: app.baseUrl,
    });
    expect(params.has('code')).toBe(false);

    // Bob's own hint: the code at once, as without a hint.
    const own = back(
      await bobs.agent.get('/oauth/authorize').query(query({ prompt: 'none', id_token_hint: bobHint })),
    );
    expect(own.get('code')).toBeTruthy();
  });

  it("without prompt=none, another user's hint shows the sign-in, where the named user can sign in", async () => {
    const app = await start();
    const aliceHint = await signIn(app, 'alice');
    const bobs = browser(app);
    await signIn(bobs, 'bob');
    const res = await bobs.agent.get('/oauth/authorize').query(query({ id_token_hint: aliceHint }));
    expect(res.status).toBe(200);
    expect(res.text).toContain('Sign in');
    expect(res.headers.location).toBeUndefined();
    // Alice signs in there: her code, for her (the hint is not asked again after that login).
    const again = await authorizeWithLogin(bobs, query({ id_token_hint: aliceHint }), 'alice');
    const code = back(again).get('code')!;
    const token = await bobs.agent
      .post('/oauth/token')
      .type('form')
      .auth('rp', secret)
      .send({ grant_type: 'authorization_code', code, redirect_uri: CODE_REDIRECT });
    expect(decodeJwt(token.body.id_token as string).sub).toBe(decodeJwt(aliceHint).sub);
  });

  it('a hint this server did not sign: invalid_request at the redirect URI; not an OpenID request: ignored', async () => {
    const app = await start();
    const aliceHint = await signIn(app, 'alice', { scope: 'openid profile' });
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ sub: decodeJwt(aliceHint).sub })
      .setProtectedHeader({ alg: 'RS256', kid: 'forged' })
      .setIssuer(app.baseUrl)
      .setAudience('rp')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    for (const hint of [forged, 'not.a.jwt', `${aliceHint.slice(0, -4)}AAAA`]) {
      const params = back(
        await app.agent.get('/oauth/authorize').query(query({ prompt: 'none', id_token_hint: hint })),
      );
      expect(params.get('error')).toBe('invalid_request');
      expect(params.get('error_description')).toMatch(/id_token_hint/);
    }
    // Without openid the request is plain OAuth 2.0: the parameter means nothing there.
    const plain = await app.agent
      .get('/oauth/authorize')
      .query(query({ scope: 'profile', id_token_hint: forged }));
    expect(back(plain).get('code')).toBeTruthy();
  });
});

describe('id_token_hint, as a relying party could misuse it', () => {
  it("another client's ID token is no hint: it would tell this client who is signed in", async () => {
    const app = await start();
    const aliceHint = await signIn(app, 'alice');
    await registerClient(app.storage, {
      clientId: 'other',
      applicationName: 'Other app',
      redirectUri: CODE_REDIRECT,
      scopes: ['openid'],
    });
    const params = back(
      await app.agent
        .get('/oauth/authorize')
        .query(query({ client_id: 'other', prompt: 'none', id_token_hint: aliceHint })),
    );
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toMatch(/issued to this client/);
  });

  it('the hint holds when the request resumes: bob, back from a cancelled sign-in, gets no code', async () => {
    const app = await start();
    const aliceHint = await signIn(app, 'alice');
    const bobs = browser(app);
    await signIn(bobs, 'bob');
    const asked = await bobs.agent.get('/oauth/authorize').query(query({ id_token_hint: aliceHint }));
    expect(asked.status).toBe(200); // the sign-in
    const resumed = await bobs.agent.get('/oauth/authorize/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.headers.location).toBeUndefined();
    expect(resumed.text).toContain('Sign in');
  });
});

describe('the bound of a hint', () => {
  /** Host claims that bring an ID token to about `size` characters. */
  const bulky = (size: number) => ({ keySecret: KEY_SECRET, claims: () => ({ bio: 'x'.repeat(size) }) });

  it('a genuine ID token with a 2 KB nonce and the host claims goes back to end-session and authorize', async () => {
    const app = await start(bulky(6000));
    const hint = await signIn(app, 'alice', { nonce: 'n'.repeat(2048) });
    expect(hint.length).toBeGreaterThan(8000);
    expect(hint.length).toBeLessThanOrEqual(MAX_ID_TOKEN_LENGTH);

    const own = back(
      await app.agent.get('/oauth/authorize').query(query({ prompt: 'none', id_token_hint: hint })),
    );
    expect(own.get('code')).toBeTruthy();

    const ask = await app.agent.get('/oauth/end-session').query({ id_token_hint: hint });
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('Relying party asks you to sign out');
    const form = parseForm(ask.text);
    const done = await app.agent
      .post(pathOf(form.action))
      .type('form')
      .set('Origin', new URL(app.baseUrl).origin)
      .send(form.fields);
    expect(done.status).toBe(200);
    const after = back(await app.agent.get('/oauth/authorize').query(query({ prompt: 'none' })));
    expect(after.get('error')).toBe('login_required');
  });

  it('an ID token past the bound is not issued: server_error, and the log names oidc.claims', async () => {
    const lines: string[] = [];
    t = await createTestApp({
      oidc: bulky(MAX_ID_TOKEN_LENGTH),
      logger: {
        warn: () => {},
        error: (message, details) =>
          void lines.push(`${message} ${String((details?.error as Error)?.message)}`),
      },
    });
    const app = t;
    secret = (
      await registerClient(app.storage, {
        clientId: 'rp',
        applicationName: 'Relying party',
        redirectUri: CODE_REDIRECT,
        scopes: ['openid'],
      })
    ).clientSecret!;
    const token = await signInAndExchange(app, 'alice');
    expect(token.status).toBe(500);
    expect(token.body.error).toBe('server_error');
    expect(token.body.error_description).toMatch(/too large/);
    expect(lines.join('\n')).toMatch(/oidc\.claims/);
  });
});
