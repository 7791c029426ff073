import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/crypto/secrets.js';
import { memoryStorage, registerClient, StorageUnavailableError } from '../../src/index.js';
import { type TokenRecord } from '../../src/storage/index.js';
import type { MemoryStorage } from '../../src/storage/memory.js';
import { ephemeralKeys } from '../../src/storage/keys.js';
import {
  CODE_REDIRECT,
  createTestApp,
  expectOAuthError,
  redirectParams,
  type TestApp,
} from '../support/app.js';
import { recordEvents } from '../support/endpoints.js';
import { exchangeCode, obtainCode, obtainTokens, refreshWith } from '../support/flow.js';
import { seedCode, storedToken, tokenWorks } from '../support/grants.js';

// Also proven elsewhere (token.endpoint.test.ts): a second use of a code fails and revokes the
// grant of the first; exactly one of 20 concurrent exchanges wins; a code of another client, an
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
  it('revokes the whole grant: every token, those obtained by refreshing too, and the consent', async () => {
    const { code } = await obtainCode(t);
    const first = (await exchangeCode(t, code)).body;
    const refreshed = (await refreshWith(t, first.refresh_token)).body;
    expect((await bearer(refreshed.access_token)).status).toBe(200);
    expectOAuthError(await exchangeCode(t, code), 'invalid_grant');
    for (const token of [first.access_token, refreshed.access_token]) {
      expect((await bearer(token)).status).toBe(401);
      expect(await tokenWorks(t.server, token)).toBe(false);
    }
    expect(await tokenWorks(t.server, first.refresh_token)).toBe(false);
    expectOAuthError(await refreshWith(t, first.refresh_token), 'invalid_grant');
    // The consent went with the grant: the next authorization of the same browser asks again.
    const grants = await t.storage.grants.list({ clientId: t.codeClient.clientId });
    expect(grants).toEqual([expect.objectContaining({ revokedAt: expect.any(Number) })]);
    const again = await t.agent
      .get('/oauth/authorize')
      .query({ response_type: 'code', client_id: 'code-client', redirect_uri: CODE_REDIRECT, state: 's' });
    expect(again.status).toBe(200);
    expect(again.text).toContain('/oauth/authorize/decision');
  });

  it('stores codes and tokens only as hashes', async () => {
    const { code } = await obtainCode(t);
    const now = t.server.clock();
    const unused = await t.storage.ephemeral.get(ephemeralKeys.code(hashSecret(code)), now);
    expect(unused).not.toBeNull();
    expect(unused).not.toContain(code);
    expect(await t.storage.ephemeral.get(ephemeralKeys.code(code), now)).toBeNull();
    const tokens = (await exchangeCode(t, code)).body;
    for (const token of [tokens.access_token, tokens.refresh_token]) {
      expect(await t.storage.tokens.find(token)).toBeNull();
      const stored = await storedToken(t.server, token);
      expect(stored).not.toBeNull();
      expect(JSON.stringify(stored)).not.toContain(token);
    }
    // The used marker takes the code's place, under its hash.
    const used = await t.storage.ephemeral.get(ephemeralKeys.code(hashSecret(code)), now);
    expect(JSON.parse(used!)).toMatchObject({ used: true });
    expect(used).not.toContain(code);
    expect(await t.storage.ephemeral.get(ephemeralKeys.code(code), now)).toBeNull();
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

  it('refuses a code of another client without issuing anything to it', async () => {
    const other = await registerClient(t.storage, { applicationName: 'Other', redirectUri: CODE_REDIRECT });
    const events = recordEvents(t);
    const { code } = await obtainCode(t);
    const res = await exchangeCode(t, code, {
      client_id: other.clientId,
      client_secret: other.clientSecret!,
    });
    expectOAuthError(res, 'invalid_grant');
    expect(res.body.error_description).toBe('The authorization code was issued to another client.');
    expect(res.body).not.toHaveProperty('access_token');
    expect(events.filter((e) => e.type === 'token.issued' || e.type === 'code.replayed')).toEqual([]);
    // The code is checked before it is taken (the commit point), so the other client's attempt
    // does not spend it: the rightful client's exchange is no replay and succeeds.
    const rightful = await exchangeCode(t, code);
    expect(rightful.status).toBe(200);
    expect((await bearer(rightful.body.access_token)).status).toBe(200);
    expect(events.filter((e) => e.type === 'token.issued').map((e) => e.clientId)).toEqual(['code-client']);
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
    const twin = await registerClient(t.storage, {
      clientId: 'pkce-twin',
      applicationName: 'Native App',
      redirectUri: 'https://native.example/cb',
      requirePkce: true,
    });
    const code = await seedCode(t.server, {
      clientId: 'pkce-twin',
      userId: 'u1',
      redirectUri: 'https://native.example/cb',
      scopes: [],
      codeChallenge: null,
    });
    const res = await exchangeCode(t, code, {
      client_id: 'pkce-twin',
      client_secret: twin.clientSecret!,
      redirect_uri: 'https://native.example/cb',
    });
    expectOAuthError(res, 'invalid_grant');
    expect(res.body.error_description).toBe('This client must use PKCE.');
    expect(res.body).not.toHaveProperty('access_token');
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

/**
 * Makes the next call of `store[method]` whose arguments `matches` accepts reject with a
 * `StorageUnavailableError`, once; every other call goes through. Resolves how many calls failed.
 */
function failOnce<S extends object, K extends keyof S>(
  store: S,
  method: K,
  matches: (...args: never[]) => boolean,
): { failures: () => number } {
  const original = store[method] as (...args: unknown[]) => Promise<unknown>;
  let failures = 0;
  store[method] = ((...args: never[]) => {
    if (failures === 0 && matches(...args)) {
      failures++;
      return Promise.reject(new StorageUnavailableError('injected before the commit'));
    }
    return original.apply(store, args);
  }) as S[K];
  return { failures: () => failures };
}

/** The answer of an outage: 503 `temporarily_unavailable` with Retry-After, nothing issued. */
function expectUnavailable(res: { status: number; body: unknown; headers: Record<string, string> }) {
  expectOAuthError(res, 'temporarily_unavailable', 503);
  expect(res.body).not.toHaveProperty('access_token');
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
}

describe('commit points: a storage failure before the commit is no replay, and the retry succeeds', () => {
  let storage: MemoryStorage;
  beforeEach(async () => {
    await t.close();
    storage = memoryStorage();
    t = await createTestApp({ storage, tokens: { rotateRefreshTokens: true } });
  });

  it.each([
    ['saving its tokens (one tokens.saveAll)', 'saveAll'],
    ['its commit (ephemeral.replace), before it ran', 'replace'],
  ] as const)('code exchange: %s fails, then the retry with the same code works', async (_n, where) => {
    const events = recordEvents(t);
    const { code } = await obtainCode(t);
    const injected =
      where === 'saveAll'
        ? failOnce(storage.tokens, 'saveAll', (tokens: TokenRecord[]) => tokens.length === 2)
        : failOnce(
            storage.ephemeral,
            'replace',
            (key: string) => key === ephemeralKeys.code(hashSecret(code)),
          );
    expectUnavailable(await exchangeCode(t, code));
    expect(injected.failures()).toBe(1);

    const retry = await exchangeCode(t, code);
    expect(retry.status).toBe(200);
    expect((await bearer(retry.body.access_token)).status).toBe(200);
    expect((await refreshWith(t, retry.body.refresh_token)).status).toBe(200);
    expect(events.map((e) => e.type)).not.toContain('code.replayed');
    const [grant] = await t.storage.grants.list({ clientId: t.codeClient.clientId });
    expect(grant!.revokedAt).toBeNull();
    // Now the code is spent: a third presentation is a replay, as ever.
    expectOAuthError(await exchangeCode(t, code), 'invalid_grant');
    expect(events.map((e) => e.type)).toContain('code.replayed');
  });

  it.each([
    ['saving the new refresh token', 'tokens.save'],
    ['adding the rotation marker', 'ephemeral.add'],
  ] as const)(
    'refresh with rotation: %s fails, then the retry with the same token works',
    async (_n, where) => {
      const events = recordEvents(t);
      const first = await obtainTokens(t);
      const injected =
        where === 'tokens.save'
          ? failOnce(storage.tokens, 'save', (token: TokenRecord) => token.type === 'refresh_token')
          : failOnce(
              storage.ephemeral,
              'add',
              (key: string) => key === ephemeralKeys.rotated(hashSecret(first.refresh_token)),
            );
      expectUnavailable(await refreshWith(t, first.refresh_token));
      expect(injected.failures()).toBe(1);

      // Not treated as reuse: the grant stands, and the same refresh token is rotated now.
      const retry = await refreshWith(t, first.refresh_token);
      expect(retry.status).toBe(200);
      expect(retry.body.refresh_token).not.toBe(first.refresh_token);
      expect(events.map((e) => e.type)).not.toContain('refresh_token.reused');
      for (const token of [first.access_token, retry.body.access_token, retry.body.refresh_token]) {
        expect(await tokenWorks(t.server, token)).toBe(true);
      }
      expect((await bearer(retry.body.access_token)).status).toBe(200);
      expect((await refreshWith(t, retry.body.refresh_token)).status).toBe(200);
      // The rotation did commit this time: the replaced token presented again is reuse.
      expectOAuthError(await refreshWith(t, first.refresh_token), 'invalid_grant');
      expect(events.map((e) => e.type)).toContain('refresh_token.reused');
    },
  );

  it('refresh with rotation: marking the replaced token fails, then nothing is handed out and the retry revokes (fail closed)', async () => {
    const events = recordEvents(t);
    const first = await obtainTokens(t);
    // Marking the presented token rotated follows the commit (the marker) and precedes the answer:
    // its failure fails the request, so no second chain is ever handed out (RFC 9700 4.14.2).
    const injected = failOnce(
      storage.tokens,
      'save',
      (token: TokenRecord) => token.tokenHash === hashSecret(first.refresh_token) && token.rotatedAt !== null,
    );
    const rotated = await refreshWith(t, first.refresh_token);
    expect(rotated.status).toBe(503);
    expect(rotated.body.refresh_token).toBeUndefined();
    expect(injected.failures()).toBe(1);
    expectOAuthError(await refreshWith(t, first.refresh_token), 'invalid_grant');
    expect(events.map((e) => e.type)).toContain('refresh_token.reused');
    expect(await tokenWorks(t.server, first.access_token)).toBe(false);
  });
});
