import express from 'express';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { hashSecret } from '../../../src/crypto/secrets.js';
import {
  createAuthorizationServer,
  memoryStorage,
  registerClient,
  tokenRouter,
  type AuthorizationServerOptions,
  type Storage,
} from '../../../src/index.js';
import { type EphemeralStore } from '../../../src/storage/index.js';
import { ephemeralKeys } from '../../../src/storage/keys.js';
import {
  CODE_REDIRECT,
  createTestApp,
  expectOAuthError,
  recordingLogger,
  type TestApp,
} from '../../support/app.js';
import { basicAuth, exchangeCode, obtainCode, obtainTokens, refreshWith } from '../../support/flow.js';
import { startServer, type TestServer } from '../../support/openid-servers.js';

// Also proven elsewhere: HTTP Basic accepted and two methods at once refused (token.endpoint.test.ts);
// secrets compared in constant time on SHA-256 hashes (src/crypto/secrets.ts, secretMatchesHash).

let t: TestApp;
const others: TestServer[] = [];
/** The server's clock runs `skew` ms ahead of real time (the provider's nonces use real time). */
let skew = 0;
const clock = () => Date.now() + skew;
afterEach(async () => {
  skew = 0;
  await t.close();
  await Promise.all(others.splice(0).map((s) => s.close()));
});

/** Every request comes from 127.0.0.1; `trust proxy` lets a test name another address. */
const trustLoopbackProxy = (app: express.Express) => app.set('trust proxy', 'loopback');

async function start(overrides: Partial<AuthorizationServerOptions> = {}) {
  t = await createTestApp({ clock, ...overrides }, trustLoopbackProxy);
}

/** The failure count of a rate-limit key (`client:<id>` or `address:<ip>`), `null` when none. */
const failuresOf = (key: string, now = clock()) => t.storage.ephemeral.get(ephemeralKeys.rateLimit(key), now);

/** A token request with body credentials (or none), from `address` if given. */
function tokenRequest(fields: Record<string, string>, address?: string) {
  const req = t.agent.post('/oauth/token').type('form');
  if (address) req.set('X-Forwarded-For', address);
  return req.send({ grant_type: 'authorization_code', code: 'x', redirect_uri: CODE_REDIRECT, ...fields });
}
const wrongSecret = (address?: string) =>
  tokenRequest({ client_id: t.codeClient.clientId, client_secret: 'wrong' }, address);

/** Asserts the rate-limit answer: 429, Retry-After within the window, an OAuth-style JSON body. */
function expectLimited(res: supertest.Response, windowSeconds: number) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    error: 'temporarily_unavailable',
    error_description: 'Too many failed client authentications. Try again later.',
  });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['www-authenticate']).toBeUndefined();
}

/** Another app instance on the same storage, with only the token endpoint. */
async function otherInstance(storage: Storage, logger = recordingLogger()) {
  const server = createAuthorizationServer({
    baseUrl: t.baseUrl,
    storage,
    providers: [{ name: 'Development provider', identifier: t.provider.identifier }],
    session: { secret: 'a test session secret that is long enough' },
    logger,
    clock,
    rateLimit: { maxFailuresPerClient: 3 },
  });
  const http = await startServer(express().use(tokenRouter(server)));
  others.push(http);
  return supertest(http.url);
}

describe('client authentication: unknown client and wrong secret look the same', () => {
  it('answers every failure with the same status, body and headers', async () => {
    await start();
    const disabled = await registerClient(t.storage, {
      clientId: 'disabled-client',
      applicationName: 'Disabled',
      redirectUri: CODE_REDIRECT,
    });
    await t.storage.clients.update!('disabled-client', { disabled: true });
    const failures = [
      await wrongSecret(),
      await tokenRequest({ client_id: 'nobody', client_secret: 'wrong' }),
      await tokenRequest({ client_id: 'nobody', client_secret: t.codeClient.clientSecret }),
      await tokenRequest({ client_id: 'disabled-client', client_secret: disabled.clientSecret! }),
      await tokenRequest({ client_id: 'implicit-client', client_secret: 'anything' }),
      await tokenRequest({ client_id: t.codeClient.clientId }),
      await tokenRequest({}),
      await tokenRequest({}).set('Authorization', basicAuth('nobody', 'wrong')),
      await tokenRequest({}).set('Authorization', basicAuth(t.codeClient.clientId, 'wrong')),
    ];
    const shape = (res: supertest.Response) => {
      const headers: Record<string, unknown> = { ...res.headers };
      delete headers.date;
      delete headers['x-request-id']; // Unique per request by design.
      return { status: res.status, body: res.body, headers };
    };
    const first = shape(failures[0]!);
    expect(first.status).toBe(401);
    expect(first.body).toEqual({
      error: 'invalid_client',
      error_description: 'Client authentication failed.',
    });
    expect(first.headers['www-authenticate']).toMatch(/^Basic realm="127\.0\.0\.1:\d+"$/);
    for (const res of failures) expect(shape(res)).toEqual(first);
  });

  it('keeps only a hash of the secret', async () => {
    await start();
    const stored = (await t.storage.clients.find('code-client'))!;
    expect(stored.secretHash).toBe(hashSecret(t.codeClient.clientSecret));
    expect(JSON.stringify(stored)).not.toContain(t.codeClient.clientSecret);
  });

  it('refuses an over-long id in the Basic header as malformed, without a lookup', async () => {
    await start();
    let lookups = 0;
    const find = t.storage.clients.find.bind(t.storage.clients);
    t.storage.clients.find = (id) => (lookups++, find(id));
    const res = await tokenRequest({}).set('Authorization', basicAuth('c'.repeat(3000), 'secret'));
    expectOAuthError(res, 'invalid_request');
    expect(lookups).toBe(0);
  });
});

describe('client authentication: failures rate limited per client', () => {
  it('answers 429 after the limit, to the right secret too, and the refused code stays usable', async () => {
    await start({ rateLimit: { windowMs: 10_000, maxFailuresPerClient: 3 } });
    const { code } = await obtainCode(t);
    for (let i = 0; i < 3; i++) expectOAuthError(await wrongSecret(), 'invalid_client', 401);
    expectLimited(await wrongSecret(), 10);
    // The right secret is refused as well: a right guess must look like a wrong one.
    expectLimited(await exchangeCode(t, code), 10);
    // Other clients, from the same address, are not locked out.
    const other = await registerClient(t.storage, { applicationName: 'Other', redirectUri: CODE_REDIRECT });
    expectOAuthError(
      await tokenRequest({ client_id: other.clientId, client_secret: other.clientSecret! }),
      'invalid_grant',
    );
    // The window ends (within the code's 60 s): the refused code was never consumed.
    skew += 10_000;
    expect((await exchangeCode(t, code)).status).toBe(200);
  });

  it('counts an unknown client_id exactly like a known one', async () => {
    await start({ rateLimit: { maxFailuresPerClient: 2 } });
    const statuses = async (fields: Record<string, string>) => {
      const out: number[] = [];
      for (let i = 0; i < 4; i++) out.push((await tokenRequest(fields)).status);
      return out;
    };
    const unknown = await statuses({ client_id: 'nobody', client_secret: 'wrong' });
    const known = await statuses({ client_id: t.codeClient.clientId, client_secret: 'wrong' });
    expect(unknown).toEqual([401, 401, 429, 429]);
    expect(known).toEqual(unknown);
  });

  it('counts failures by Basic and by body under the same client', async () => {
    await start({ rateLimit: { maxFailuresPerClient: 2 } });
    expect((await tokenRequest({}).set('Authorization', basicAuth('code-client', 'wrong'))).status).toBe(401);
    expect((await wrongSecret()).status).toBe(401);
    expect((await tokenRequest({}).set('Authorization', basicAuth('code-client', 'wrong'))).status).toBe(429);
  });

  it('never counts a success, not even while many run at once', async () => {
    await start({ rateLimit: { maxFailuresPerClient: 2, maxFailuresPerAddress: 2 } });
    const { refresh_token } = await obtainTokens(t);
    const results = await Promise.all(Array.from({ length: 25 }, () => refreshWith(t, refresh_token)));
    expect(results.map((r) => r.status)).toEqual(Array(25).fill(200));
    expect(await failuresOf('client:code-client')).toBeNull();
    expect(await failuresOf('address:127.0.0.1')).toBeNull();
    // Two failures are still allowed after all those successes, the third is refused.
    expect((await wrongSecret()).status).toBe(401);
    expect((await wrongSecret()).status).toBe(401);
    expect((await wrongSecret()).status).toBe(429);
  });

  it('does not count malformed requests or other errors, only client authentication failures', async () => {
    await start({ rateLimit: { maxFailuresPerClient: 1, maxFailuresPerAddress: 1 } });
    const both = () =>
      tokenRequest({ client_secret: t.codeClient.clientSecret }).set(
        'Authorization',
        basicAuth(t.codeClient.clientId, t.codeClient.clientSecret),
      );
    for (let i = 0; i < 3; i++) {
      expectOAuthError(await both(), 'invalid_request');
      expectOAuthError(await exchangeCode(t, 'unknown-code'), 'invalid_grant');
      expectOAuthError(await tokenRequest({ grant_type: 'password' }), 'unsupported_grant_type');
    }
    expect((await wrongSecret()).status).toBe(401);
    expect((await wrongSecret()).status).toBe(429);
  });
});

describe('client authentication: failures rate limited per address', () => {
  it('limits one address across client ids, and no other address or client', async () => {
    await start({ rateLimit: { windowMs: 60_000, maxFailuresPerClient: 100, maxFailuresPerAddress: 3 } });
    const spray = (i: number, address: string) =>
      tokenRequest({ client_id: `guess-${i}`, client_secret: 'wrong' }, address);
    for (let i = 0; i < 3; i++) expect((await spray(i, '203.0.113.7')).status).toBe(401);
    expectLimited(await spray(3, '203.0.113.7'), 60);
    // From the limited address even the right secret is refused; from elsewhere it works.
    const { code } = await obtainCode(t);
    expectLimited(await exchangeCode(t, code).set('X-Forwarded-For', '203.0.113.7'), 60);
    expect((await spray(4, '203.0.113.8')).status).toBe(401);
    expect((await exchangeCode(t, code).set('X-Forwarded-For', '198.51.100.1')).status).toBe(200);
  });
});

describe('client authentication: the address behind a proxy', () => {
  it('says once, in the log, that X-Forwarded-For arrives while trust proxy is off', async () => {
    const logger = recordingLogger();
    t = await createTestApp({ logger });
    for (let i = 0; i < 3; i++) {
      const res = await t.agent.post('/oauth/token').type('form').set('X-Forwarded-For', '203.0.113.9').send({
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: CODE_REDIRECT,
        client_id: 'nobody',
        client_secret: 'x',
      });
      expect(res.status).toBe(401);
    }
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]!.message).toMatch(
      /^rate limit: The 'X-Forwarded-For' header is set but the Express 'trust proxy' setting is false/,
    );
    // The address counted is the proxy's (the peer), not the one the header claims.
    expect(await failuresOf('address:127.0.0.1')).toBe('3');
    expect(await failuresOf('address:203.0.113.9')).toBeNull();
  });

  it('counts the forwarded address when the proxy is trusted, IPv6 per /56', async () => {
    await start({ rateLimit: { maxFailuresPerAddress: 2, maxFailuresPerClient: 100 } });
    expect((await wrongSecret('2001:db8:0:1::1')).status).toBe(401);
    expect((await wrongSecret('2001:db8:0:2::2')).status).toBe(401);
    expect((await wrongSecret('2001:db8:0:3::3')).status).toBe(429);
    expect((await wrongSecret('2001:db8:1:1::1')).status).toBe(401);
  });

  it('counts an IPv4-mapped IPv6 address as the IPv4 address', async () => {
    await start({ rateLimit: { maxFailuresPerAddress: 2, maxFailuresPerClient: 100 } });
    expect((await wrongSecret('::ffff:203.0.113.7')).status).toBe(401);
    expect(await failuresOf('address:203.0.113.7')).toBe('1');
    expect((await wrongSecret('203.0.113.7')).status).toBe(401);
    expect((await wrongSecret('::ffff:cb00:7107')).status).toBe(429);
  });

  it("says once, in the log, that 'trust proxy' is true: anyone could choose their address", async () => {
    const logger = recordingLogger();
    t = await createTestApp({ logger }, (app) => app.set('trust proxy', true));
    for (let i = 0; i < 2; i++) expect((await wrongSecret('203.0.113.9')).status).toBe(401);
    expect(logger.lines.map((line) => line.message)).toEqual([
      expect.stringMatching(/^rate limit: The Express 'trust proxy' setting is true/),
    ]);
  });
});

describe('client authentication: rate limits across instances', () => {
  it('shares the counts of the storage adapter between instances', async () => {
    await start({ rateLimit: { maxFailuresPerClient: 3 } });
    const second = await otherInstance(t.storage);
    const wrong = { grant_type: 'authorization_code', code: 'x', redirect_uri: CODE_REDIRECT };
    const viaSecond = () =>
      second
        .post('/oauth/token')
        .type('form')
        .send({ ...wrong, client_id: 'code-client', client_secret: 'wrong' });
    expect((await wrongSecret()).status).toBe(401);
    expect((await viaSecond()).status).toBe(401);
    expect((await wrongSecret()).status).toBe(401);
    expect((await viaSecond()).status).toBe(429);
    expect((await wrongSecret()).status).toBe(429);
  });

  it('refuses at start an adapter without ephemeral counters: limits are never counted per instance', async () => {
    // The counters are part of the required ephemeral store, so every instance sharing the
    // storage shares them; an adapter lacking them is refused instead of counting per instance.
    const storage: Storage = memoryStorage();
    const withoutCounters: Partial<EphemeralStore> = { ...storage.ephemeral };
    delete withoutCounters.increment;
    expect(() =>
      createAuthorizationServer({
        baseUrl: 'http://127.0.0.1:1',
        storage: { ...storage, ephemeral: withoutCounters } as unknown as Storage,
        providers: [{ name: 'Development provider', identifier: 'http://127.0.0.1:1/' }],
        session: { secret: 'a test session secret that is long enough' },
        rateLimit: { maxFailuresPerClient: 2 },
      }),
    ).toThrow(/storage: must implement the storage contract; missing: ephemeral\.increment$/m);
    // With them, a second instance counts with the first (as above), from its very first request.
    await start({ storage, rateLimit: { maxFailuresPerClient: 2 } });
    expect((await wrongSecret()).status).toBe(401);
    const second = await otherInstance(storage);
    const res = await second.post('/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code: 'x',
      redirect_uri: CODE_REDIRECT,
      client_id: 'code-client',
      client_secret: 'wrong',
    });
    expect(res.status).toBe(401);
    expect((await wrongSecret()).status).toBe(429);
    expect(await failuresOf('client:code-client')).toBe('3');
  });

  it('can be turned off', async () => {
    const logger = recordingLogger();
    await start({ rateLimit: false, logger });
    for (let i = 0; i < 15; i++) expect((await wrongSecret()).status).toBe(401);
    expect(logger.lines).toEqual([]);
  });

  it('limits by default: 10 failures per client', async () => {
    await start();
    for (let i = 0; i < 10; i++) expect((await wrongSecret()).status).toBe(401);
    expectLimited(await wrongSecret(), 15 * 60);
  });
});
