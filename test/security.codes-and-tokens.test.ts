import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashSecret } from '../src/crypto/secrets.js';
import { registerClient } from '../src/index.js';
import { issueCode } from '../src/tokens/issue.js';
import {
  CODE_REDIRECT,
  createTestApp,
  expectOAuthError,
  redirectParams,
  type TestApp,
} from './support/app.js';
import { exchangeCode, obtainCode, obtainTokens, refreshWith } from './support/flow.js';

// Also proven elsewhere (token.endpoint.test.ts): a second use of a code fails and revokes the
// tokens of the first; exactly one of 20 concurrent exchanges wins; a code of another client, an
// expired code, another redirect_uri, a wrong or missing verifier fail; a refresh token of another
// client fails; rotation revokes the grant when a replaced refresh token comes back.

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(() => t.close());

const verifier = 'v'.repeat(43) + '-._~0123456789';
const challenge = createHash('sha256').update(verifier).digest('base64url');
const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };
const bearer = (token: string) => t.agent.get('/v1/realms').set('Authorization', `Bearer ${token}`);

describe('codes: replay', () => {
  it('revokes every token of the grant, including those obtained by refreshing', async () => {
    const { code } = await obtainCode(t);
    const first = (await exchangeCode(t, code)).body;
    const refreshed = (await refreshWith(t, first.refresh_token)).body;
    expect((await bearer(refreshed.access_token)).status).toBe(200);
    expectOAuthError(await exchangeCode(t, code), 'invalid_grant');
    for (const token of [first.access_token, refreshed.access_token]) {
      expect((await bearer(token)).status).toBe(401);
      expect(await t.storage.tokens.findAccessToken(hashSecret(token))).toBeNull();
    }
    expectOAuthError(await refreshWith(t, first.refresh_token), 'invalid_grant');
  });

  it('stores codes and tokens only as hashes', async () => {
    const { code } = await obtainCode(t);
    const tokens = (await exchangeCode(t, code)).body;
    expect(await t.storage.tokens.findAccessToken(tokens.access_token)).toBeNull();
    expect(await t.storage.tokens.findAccessToken(hashSecret(tokens.access_token))).not.toBeNull();
    expect(await t.storage.tokens.findRefreshToken(tokens.refresh_token)).toBeNull();
    expect(await t.storage.codes.consume(code, Date.now())).toBeNull();
  });
});

describe('codes and refresh tokens presented by another client', () => {
  it('refuses a refresh token of another client and leaves it working for its own', async () => {
    const other = await registerClient(t.storage, { applicationName: 'Other', redirectUri: CODE_REDIRECT });
    const { refresh_token } = await obtainTokens(t);
    const res = await refreshWith(t, refresh_token, {
      client_id: other.clientId,
      client_secret: other.clientSecret!,
    });
    expectOAuthError(res, 'invalid_grant');
    expect(res.body.error_description).toBe('The refresh token is invalid.');
    expect((await refreshWith(t, refresh_token)).status).toBe(200);
  });

  it('refuses a code of another client without issuing anything to either', async () => {
    const other = await registerClient(t.storage, { applicationName: 'Other', redirectUri: CODE_REDIRECT });
    const { code } = await obtainCode(t);
    const res = await exchangeCode(t, code, {
      client_id: other.clientId,
      client_secret: other.clientSecret!,
    });
    expectOAuthError(res, 'invalid_grant');
    expect(res.body).not.toHaveProperty('access_token');
    // The stolen code is spent: the rightful client's later exchange is a replay.
    expectOAuthError(await exchangeCode(t, code), 'invalid_grant');
  });
});

describe('PKCE (RFC 7636, S256) cannot be downgraded', () => {
  it('accepts the right verifier', async () => {
    const { code } = await obtainCode(t, pkce);
    expect((await exchangeCode(t, code, { code_verifier: verifier })).status).toBe(200);
  });

  it('refuses a code issued with a challenge when the verifier is left out (also as an empty value)', async () => {
    const omitted = await obtainCode(t, pkce);
    const res = await exchangeCode(t, omitted.code);
    expectOAuthError(res, 'invalid_grant');
    expect(res.body.error_description).toBe('code_verifier is required for this code.');
    const empty = await obtainCode(t, pkce);
    expectOAuthError(await exchangeCode(t, empty.code, { code_verifier: '' }), 'invalid_grant');
  });

  it('refuses a verifier for a code issued without a challenge (RFC 9700 4.8.2)', async () => {
    const { code } = await obtainCode(t);
    const res = await exchangeCode(t, code, { code_verifier: verifier });
    expectOAuthError(res, 'invalid_grant');
    expect(res.body.error_description).toBe('This code was issued without a code_challenge.');
  });

  it('refuses a malformed verifier before the code is touched', async () => {
    const { code } = await obtainCode(t, pkce);
    for (const bad of ['short', `${verifier}!`, 'x'.repeat(129)]) {
      expectOAuthError(await exchangeCode(t, code, { code_verifier: bad }), 'invalid_request');
    }
    expect((await exchangeCode(t, code, { code_verifier: verifier })).status).toBe(200);
  });

  it.each([
    ['plain', { code_challenge: challenge, code_challenge_method: 'plain' }],
    ['method left out (plain by default)', { code_challenge: challenge }],
    ['method in another letter case', { code_challenge: challenge, code_challenge_method: 's256' }],
    ['a method without a challenge', { code_challenge_method: 'S256' }],
    ['a malformed challenge', { code_challenge: 'x'.repeat(42), code_challenge_method: 'S256' }],
  ])('refuses at the authorization endpoint: %s', async (_name, extra) => {
    const res = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: CODE_REDIRECT,
      state: 's',
      ...extra,
    });
    expect(res.status).toBe(302);
    expect(redirectParams(res.headers.location!)).toMatchObject({ error: 'invalid_request', state: 's' });
  });
});

describe('PKCE required per client', () => {
  beforeEach(async () => {
    await registerClient(t.storage, {
      clientId: 'pkce-client',
      applicationName: 'Native App',
      redirectUri: 'https://native.example/cb',
      requirePkce: true,
    });
  });

  it('refuses an authorization request without a challenge (RFC 7636 4.4.1)', async () => {
    const res = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'pkce-client',
      redirect_uri: 'https://native.example/cb',
      state: 's',
    });
    expect(res.status).toBe(302);
    expect(redirectParams(res.headers.location!)).toEqual({
      error: 'invalid_request',
      error_description: 'code challenge required',
      state: 's',
      iss: t.baseUrl,
    });
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('proceeds with a challenge', async () => {
    const res = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'pkce-client',
      redirect_uri: 'https://native.example/cb',
      ...pkce,
    });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Sign in to continue to Native App');
  });

  it('does not exchange a code issued without a challenge (defence in depth)', async () => {
    // A client with a secret this test knows, and a code made without a challenge, as a code
    // issued before the client was switched to requirePkce would be.
    const client = (await t.storage.clients.find('pkce-client'))!;
    await t.storage.clients.create({
      ...client,
      clientId: 'pkce-twin',
      secretHash: hashSecret('twin-secret'),
    });
    const { code } = await issueCode(t.server, {
      clientId: 'pkce-twin',
      userId: 'u1',
      redirectUri: 'https://native.example/cb',
      scopes: [],
      codeChallenge: null,
      codeChallengeMethod: null,
    });
    const res = await exchangeCode(t, code, {
      client_id: 'pkce-twin',
      client_secret: 'twin-secret',
      redirect_uri: 'https://native.example/cb',
    });
    expectOAuthError(res, 'invalid_grant');
    expect(res.body.error_description).toBe('This client must use PKCE.');
  });

  it('is refused at registration for an implicit client', async () => {
    await expect(
      registerClient(t.storage, {
        applicationName: 'SPA',
        redirectUri: 'https://spa2.example/',
        grantType: 'implicit',
        requirePkce: true,
      }),
    ).rejects.toThrow('requirePkce applies to authorization_code clients only');
  });

  it('is stored on the client record, and absent for other clients', async () => {
    expect((await t.storage.clients.find('pkce-client'))!.requirePkce).toBe(true);
    expect((await t.storage.clients.find('code-client'))!.requirePkce).toBeUndefined();
  });
});

describe('refresh token rotation (tokens.rotateRefreshTokens)', () => {
  it('detects the reuse of a token two rotations old and revokes the whole grant', async () => {
    await t.close();
    t = await createTestApp({ tokens: { rotateRefreshTokens: true } });
    const first = await obtainTokens(t);
    const second = (await refreshWith(t, first.refresh_token)).body;
    const third = (await refreshWith(t, second.refresh_token)).body;
    expect((await bearer(third.access_token)).status).toBe(200);
    expectOAuthError(await refreshWith(t, first.refresh_token), 'invalid_grant');
    expectOAuthError(await refreshWith(t, third.refresh_token), 'invalid_grant');
    for (const token of [first.access_token, second.access_token, third.access_token]) {
      expect((await bearer(token)).status).toBe(401);
    }
  });

  it('without rotation, never revokes on reuse: the same refresh token keeps working (the spec)', async () => {
    const { refresh_token } = await obtainTokens(t);
    for (let i = 0; i < 3; i++)
      expect((await refreshWith(t, refresh_token)).body.refresh_token).toBe(refresh_token);
  });
});
