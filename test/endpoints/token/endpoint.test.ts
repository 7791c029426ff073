import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerClient } from '../../../src/index.js';
import { CODE_REDIRECT, createTestApp, expectOAuthError, type TestApp } from '../../support/app.js';
import { exchangeCode, obtainCode } from '../../support/flow.js';
import { tokenWorks } from '../../support/grants.js';

let t: TestApp;
/** The server's clock runs `skew` ms ahead of real time (the provider's nonces use real time). */
let skew = 0;
const clock = () => Date.now() + skew;
beforeEach(async () => {
  skew = 0;
  t = await createTestApp({ clock });
});
afterEach(() => t.close());

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('token endpoint: authorization_code', () => {
  it('accepts HTTP Basic client authentication (RFC 6749 2.3.1)', async () => {
    const { code } = await obtainCode(t);
    const res = await t.agent
      .post('/oauth/token')
      .set('Authorization', basic(t.codeClient.clientId, t.codeClient.clientSecret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: CODE_REDIRECT });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
  });

  it('refuses a second use of a code and revokes the grant of the first (RFC 6749 4.1.2)', async () => {
    const { code } = await obtainCode(t);
    const first = await exchangeCode(t, code);
    expect(first.status).toBe(200);
    const second = await exchangeCode(t, code);
    expectOAuthError(second, 'invalid_grant');
    expect(await tokenWorks(t.server, first.body.access_token)).toBe(false);
    expect(await tokenWorks(t.server, first.body.refresh_token)).toBe(false);
    const [grant] = await t.storage.grants.list({ clientId: t.codeClient.clientId });
    expect(grant?.revokedAt).toEqual(expect.any(Number));
    const realms = await t.agent.get('/v1/realms').set('Authorization', `Bearer ${first.body.access_token}`);
    expect(realms.status).toBe(401);
  });

  it('lets exactly one of many concurrent exchanges of one code succeed', async () => {
    const { code } = await obtainCode(t);
    const results = await Promise.all(Array.from({ length: 20 }, () => exchangeCode(t, code)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
  });

  it('refuses an expired code: 60 s by default', async () => {
    const { code } = await obtainCode(t);
    skew += 60_000;
    expectOAuthError(await exchangeCode(t, code), 'invalid_grant');
  });

  it('accepts a code a second before it expires', async () => {
    const { code } = await obtainCode(t);
    skew += 59_000;
    expect((await exchangeCode(t, code)).status).toBe(200);
  });

  it('refuses a redirect_uri other than the one of the authorization request', async () => {
    const { code } = await obtainCode(t, { redirect_uri: `${CODE_REDIRECT}/sub` });
    expectOAuthError(await exchangeCode(t, code), 'invalid_grant');
  });

  it('refuses a code presented by another client', async () => {
    const other = await registerClient(t.storage, { applicationName: 'Other', redirectUri: CODE_REDIRECT });
    const { code } = await obtainCode(t);
    const res = await exchangeCode(t, code, {
      client_id: other.clientId,
      client_secret: other.clientSecret!,
    });
    expectOAuthError(res, 'invalid_grant');
  });

  it('refuses an unknown code', async () => {
    expectOAuthError(await exchangeCode(t, 'not-a-code'), 'invalid_grant');
  });

  it('supports PKCE S256 and refuses a wrong or missing verifier', async () => {
    const verifier = 'v'.repeat(50);
    const challenge = (await import('node:crypto')).createHash('sha256').update(verifier).digest('base64url');
    const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };
    const good = await obtainCode(t, pkce);
    expect((await exchangeCode(t, good.code, { code_verifier: verifier })).status).toBe(200);
    const wrong = await obtainCode(t, pkce);
    expectOAuthError(await exchangeCode(t, wrong.code, { code_verifier: 'w'.repeat(50) }), 'invalid_grant');
    const missing = await obtainCode(t, pkce);
    expectOAuthError(await exchangeCode(t, missing.code), 'invalid_grant');
  });
});

describe('token endpoint: client authentication', () => {
  it.each([
    ['wrong secret', { client_secret: 'wrong' }],
    ['unknown client', { client_id: 'nobody' }],
    ['no secret', { client_secret: '' }],
    ['implicit client', { client_id: 'implicit-client' }],
  ])('%s: 401 invalid_client with WWW-Authenticate, identical from outside', async (_name, extra) => {
    const res = await exchangeCode(t, 'whatever', extra);
    expectOAuthError(res, 'invalid_client', 401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm="127\.0\.0\.1:\d+"$/);
    expect(res.body.error_description).toBe('Client authentication failed.');
  });

  it('refuses two authentication methods at once', async () => {
    const res = await t.agent
      .post('/oauth/token')
      .set('Authorization', basic(t.codeClient.clientId, t.codeClient.clientSecret))
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: CODE_REDIRECT,
        client_secret: t.codeClient.clientSecret,
      });
    expectOAuthError(res, 'invalid_request');
  });
});

describe('token endpoint: malformed requests', () => {
  it('refuses GET', async () => {
    const res = await t.agent.get('/oauth/token');
    expectOAuthError(res, 'invalid_request');
    expect(res.headers.allow).toBe('POST');
  });

  it('refuses a JSON body', async () => {
    const res = await t.agent.post('/oauth/token').send({ grant_type: 'authorization_code' });
    expectOAuthError(res, 'invalid_request');
  });

  it('refuses parameters in the URL', async () => {
    const res = await t.agent
      .post('/oauth/token?code=x')
      .type('form')
      .send({ grant_type: 'authorization_code' });
    expectOAuthError(res, 'invalid_request');
  });

  it('refuses a repeated parameter without consuming the code', async () => {
    const { code } = await obtainCode(t);
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
      redirect_uri: CODE_REDIRECT,
    });
    body.append('redirect_uri', CODE_REDIRECT);
    expectOAuthError(
      await t.agent.post('/oauth/token').type('form').send(body.toString()),
      'invalid_request',
    );
    expect((await exchangeCode(t, code)).status).toBe(200);
  });

  it('refuses an oversized body with invalid_request', async () => {
    const res = await t.agent
      .post('/oauth/token')
      .type('form')
      .send(`grant_type=${'a'.repeat(20_000)}`);
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('invalid_request');
  });

  it.each([
    ['missing grant_type', {}, 'invalid_request'],
    ['unknown grant_type', { grant_type: 'password' }, 'unsupported_grant_type'],
    ['missing code', { grant_type: 'authorization_code', code: '' }, 'invalid_request'],
    ['missing redirect_uri', { grant_type: 'authorization_code', redirect_uri: '' }, 'invalid_request'],
  ])('%s', async (_name, extra, error) => {
    const body = {
      grant_type: 'authorization_code',
      code: 'x',
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
      redirect_uri: CODE_REDIRECT,
      ...extra,
    } as Record<string, string>;
    if (!('grant_type' in extra)) delete body.grant_type;
    expectOAuthError(await t.agent.post('/oauth/token').type('form').send(body), error as 'invalid_request');
  });
});

describe('token endpoint: refresh_token', () => {
  async function tokens() {
    const { code } = await obtainCode(t);
    return (await exchangeCode(t, code)).body as { access_token: string; refresh_token: string };
  }
  const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
    t.agent
      .post('/oauth/token')
      .type('form')
      .send({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: t.codeClient.clientId,
        client_secret: t.codeClient.clientSecret,
        redirect_uri: CODE_REDIRECT,
        ...extra,
      });

  it('keeps working long after the access token expired (no fixed expiry)', async () => {
    const { refresh_token } = await tokens();
    skew += 365 * 24 * 3600 * 1000;
    expect((await refresh(refresh_token)).status).toBe(200);
  });

  it('refuses an unknown refresh token, another client, a wrong redirect_uri and a wider scope', async () => {
    const { refresh_token } = await tokens();
    const other = await registerClient(t.storage, { applicationName: 'Other', redirectUri: CODE_REDIRECT });
    expectOAuthError(await refresh('nope'), 'invalid_grant');
    expectOAuthError(
      await refresh(refresh_token, { client_id: other.clientId, client_secret: other.clientSecret! }),
      'invalid_grant',
    );
    expectOAuthError(
      await refresh(refresh_token, { redirect_uri: 'https://evil.example/cb' }),
      'invalid_grant',
    );
    expectOAuthError(await refresh(refresh_token, { scope: 'realms admin' }), 'invalid_scope');
    const narrowed = await refresh(refresh_token, { scope: 'realms' });
    expect(narrowed.body.scope).toBe('realms');
  });
});

describe('token endpoint: refresh token rotation (option)', () => {
  it('issues a new refresh token each time and revokes the grant when an old one is reused', async () => {
    await t.close();
    t = await createTestApp({ clock, tokens: { rotateRefreshTokens: true } });
    const { code } = await obtainCode(t);
    const first = (await exchangeCode(t, code)).body;
    const send = (token: string) =>
      t.agent.post('/oauth/token').type('form').send({
        grant_type: 'refresh_token',
        refresh_token: token,
        client_id: t.codeClient.clientId,
        client_secret: t.codeClient.clientSecret,
        redirect_uri: CODE_REDIRECT,
      });
    const second = await send(first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expectOAuthError(await send(first.refresh_token), 'invalid_grant');
    // Reuse revoked the whole grant, including the newest refresh token and access tokens.
    expectOAuthError(await send(second.body.refresh_token), 'invalid_grant');
    const realms = await t.agent.get('/v1/realms').set('Authorization', `Bearer ${second.body.access_token}`);
    expect(realms.status).toBe(401);
  });
});
