/**
 * OpenID Connect's `prompt` and `max_age` at the authorization endpoint (Core 3.1.2.1, 3.1.2.6):
 * `prompt=none` never shows a page, `prompt=login` and `max_age` ask for a fresh login (and the
 * ID token's `auth_time` says when it was), `prompt=consent` shows the consent page to a user who
 * already trusts the client. Requests without `openid`, or with OpenID Connect off, are plain
 * OAuth 2.0 and ignore them.
 */
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { registerClient, type AuthorizationServerOptions } from '../../src/index.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin } from '../support/flow.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

let now = Date.now();
let secret: string;

async function start(
  overrides: Partial<AuthorizationServerOptions> = { oidc: { keySecret: 'k'.repeat(40) } },
) {
  now = Date.now();
  t = await createTestApp({ clock: () => now, ...overrides });
  secret = (
    await registerClient(t.storage, {
      clientId: 'oidc',
      applicationName: 'OIDC app',
      redirectUri: CODE_REDIRECT,
      scopes: ['openid', 'profile', 'realms'],
    })
  ).clientSecret!;
  return t;
}

const query = (extra: Record<string, string> = {}) => ({
  response_type: 'code',
  client_id: 'oidc',
  redirect_uri: CODE_REDIRECT,
  scope: 'openid',
  state: 'st',
  ...extra,
});

/** Signs in and trusts the client with `scope`: resolves the redirect back with the code. */
async function signInAndTrust(app: TestApp, extra: Record<string, string> = {}) {
  let res = await authorizeWithLogin(app, query(extra));
  if (res.status === 200) res = await answerConsent(app, res.text, 'allow');
  expect([302, 303]).toContain(res.status);
  return new URL(res.headers.location!);
}

/** The redirect back to the client's error or code. */
function back(res: { status: number; headers: Record<string, string> }) {
  expect([302, 303]).toContain(res.status);
  const url = new URL(res.headers.location!);
  expect(url.origin + url.pathname).toBe(CODE_REDIRECT);
  return url.searchParams;
}

/** The ID token's claims for a code. */
async function idTokenOf(app: TestApp, code: string) {
  const res = await app.agent
    .post('/oauth/token')
    .type('form')
    .auth('oidc', secret)
    .send({ grant_type: 'authorization_code', code, redirect_uri: CODE_REDIRECT });
  expect(res.status).toBe(200);
  return decodeJwt(res.body.id_token as string);
}

describe('prompt and max_age', () => {
  it('prompt=none, not signed in: login_required at the redirect URI, with state and iss, no page', async () => {
    const app = await start();
    const params = back(await app.agent.get('/oauth/authorize').query(query({ prompt: 'none' })));
    expect(Object.fromEntries(params)).toMatchObject({
      error: 'login_required',
      state: 'st',
      iss: app.baseUrl,
    });
  });

  it('prompt=none, signed in and trusted: the code at once; not trusted with a scope: consent_required', async () => {
    const app = await start();
    await signInAndTrust(app);
    const ok = back(await app.agent.get('/oauth/authorize').query(query({ prompt: 'none' })));
    expect(ok.get('code')).toBeTruthy();
    const more = back(
      await app.agent.get('/oauth/authorize').query(query({ prompt: 'none', scope: 'openid realms' })),
    );
    expect(more.get('error')).toBe('consent_required');
  });

  it.each([
    [{ prompt: 'none login' }, /none cannot be combined/],
    [{ prompt: 'sometimes' }, /prompt must be/],
    [{ max_age: 'soon' }, /max_age/],
    [{ max_age: '-1' }, /max_age/],
  ])('%j: invalid_request at the redirect URI', async (extra, description) => {
    const app = await start();
    const params = back(await app.agent.get('/oauth/authorize').query(query(extra)));
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toMatch(description);
  });

  it('prompt=consent: the consent page for a client already trusted', async () => {
    const app = await start();
    await signInAndTrust(app);
    const res = await app.agent.get('/oauth/authorize').query(query({ prompt: 'consent' }));
    expect(res.status).toBe(200);
    expect(res.text).toContain('OIDC app');
    const after = await answerConsent(app, res.text, 'allow');
    expect(back(after).get('code')).toBeTruthy();
  });

  it('prompt=login and max_age: a fresh login, which auth_time then tells', async () => {
    const app = await start();
    const first = await signInAndTrust(app);
    const firstAuth = (await idTokenOf(app, first.searchParams.get('code')!)).auth_time as number;
    // Two minutes on (the provider's own clock stays behind, within the 5 minutes its answers live).
    now += 2 * 60_000;

    // max_age 3600: the login of two minutes ago will do; the code comes at once.
    const recent = back(await app.agent.get('/oauth/authorize').query(query({ max_age: '3600' })));
    expect((await idTokenOf(app, recent.get('code')!)).auth_time).toBe(firstAuth);

    // max_age 60 and prompt=login: a login first (not the code at once).
    for (const extra of [{ max_age: '60' }, { prompt: 'login' }] as Record<string, string>[]) {
      const res = await app.agent.get('/oauth/authorize').query(query(extra));
      expect(res.headers.location ?? '').not.toContain('code=');
    }
    const again = await signInAndTrust(app, { max_age: '60' });
    const fresh = (await idTokenOf(app, again.searchParams.get('code')!)).auth_time as number;
    expect(fresh).toBeGreaterThanOrEqual(firstAuth + 120);
  });

  it('without openid, or with OpenID Connect off: prompt and max_age are not looked at', async () => {
    const app = await start();
    const plain = await app.agent
      .get('/oauth/authorize')
      .query(query({ scope: 'realms', prompt: 'none', max_age: 'x' }));
    expect(plain.status).toBe(200); // the selection page, as for any OAuth request
    await app.close();
    t = undefined;
    const off = await start({});
    const res = await off.agent.get('/oauth/authorize').query(query({ prompt: 'none' }));
    expect(res.status).toBe(200);
  });

  it('a user the host signed in: auth_time only when the host says when; max_age and prompt=login then, or login_required', async () => {
    const host: { authTime?: number } = {};
    const app = await start({
      oidc: { keySecret: 'k'.repeat(40) },
      authenticatedAccount: () => ({ accountId: 'host-account-1', ...host }),
    });
    // Unknown login time: a fresh login cannot be vouched for, and no auth_time is made up.
    for (const extra of [{ max_age: '0' }, { prompt: 'login' }, { prompt: 'none', max_age: '0' }] as Record<
      string,
      string
    >[]) {
      expect(back(await app.agent.get('/oauth/authorize').query(query(extra))).get('error')).toBe(
        'login_required',
      );
    }
    const consent = await app.agent.get('/oauth/authorize').query(query());
    expect(consent.status).toBe(200);
    const code = back(await answerConsent(app, consent.text, 'allow')).get('code')!;
    expect(await idTokenOf(app, code)).not.toHaveProperty('auth_time');

    // Known: checked like the library's own logins, and told.
    host.authTime = now - 10_000;
    const fresh = back(await app.agent.get('/oauth/authorize').query(query({ max_age: '60' }))).get('code')!;
    expect((await idTokenOf(app, fresh)).auth_time).toBe(Math.floor(host.authTime / 1000));
    expect(back(await app.agent.get('/oauth/authorize').query(query({ max_age: '5' }))).get('error')).toBe(
      'login_required',
    );
  });

  it('with OpenID Connect on, a host account id must be printable ASCII: it becomes the sub', async () => {
    const app = await start({
      oidc: { keySecret: 'k'.repeat(40) },
      authenticatedAccount: () => ({ accountId: 'Ålice' }),
    });
    const res = await app.agent.get('/oauth/authorize').query(query());
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('Ålice');
  });
});
