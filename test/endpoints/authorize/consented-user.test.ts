import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage, StorageUnavailableError } from '../../../src/index.js';
import type { MemoryStorage } from '../../../src/storage/memory.js';
import { ephemeralKeys } from '../../../src/storage/keys.js';
import { CODE_REDIRECT, createTestApp, redirectParams, type TestApp } from '../../support/app.js';
import { answerConsent, authorizeWithLogin, obtainCode } from '../../support/flow.js';

/**
 * The busiest browser request: a logged-in user who already trusts the client. It runs the one
 * path of the authorization endpoint, reading each row once and writing nothing to the session.
 */
let t: TestApp;
afterEach(() => t.close());

const isSession = (key: string) => key.startsWith(ephemeralKeys.session(''));

/**
 * The memory adapter with its session calls counted: reads, and writes (`ephemeral.set`: a changed
 * session saved; the store has no `touch`, so an unchanged one is never written).
 */
function countingStorage() {
  const storage = memoryStorage();
  const calls = { get: 0, set: 0, clients: 0, grants: 0 };
  const { get, set } = storage.ephemeral;
  const counted: MemoryStorage = {
    ...storage,
    ephemeral: {
      ...storage.ephemeral,
      get: (key, now) => (isSession(key) && calls.get++, get(key, now)),
      set: (key, value, expiresAt, now) => (isSession(key) && calls.set++, set(key, value, expiresAt, now)),
    },
    clients: { ...storage.clients, find: (id) => (calls.clients++, storage.clients.find(id)) },
    grants: { ...storage.grants, list: (filter) => (calls.grants++, storage.grants.list(filter)) },
  };
  return { storage: counted, calls };
}

const query = (extra: Record<string, string> = {}) => ({
  response_type: 'code',
  client_id: 'code-client',
  redirect_uri: CODE_REDIRECT,
  state: 'xyz',
  ...extra,
});

describe('authorization request of a logged-in user who trusts the client', () => {
  it('redirects with a working code at once, reading each row once and writing nothing to the session', async () => {
    const { storage, calls } = countingStorage();
    t = await createTestApp({ storage });
    await obtainCode(t);
    const before = { ...calls };

    const res = await t.agent.get('/oauth/authorize').query(query());
    expect(res.status).toBe(302);
    expect(calls.clients - before.clients).toBe(1);
    expect(calls.grants - before.grants).toBe(1);
    expect(res.headers['x-request-id']).toBeDefined();
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    // A redirect with nothing in its body, as oauth2orize sends it.
    expect(res.headers['content-length']).toBe('0');
    expect(res.text).toBe('');
    const params = redirectParams(res.headers.location!);
    expect(params).toMatchObject({ state: 'xyz', iss: t.baseUrl });
    expect(calls.get - before.get).toBe(1);
    // Nothing changed, and the session was stored a moment ago: sliding its expiry by a second is
    // not worth a write either.
    expect(calls.set - before.set).toBe(0);

    const tokens = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code: params.code,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
      redirect_uri: CODE_REDIRECT,
    });
    expect(tokens.status).toBe(200);
  });

  it('answers every other case on the same path: new scopes, bad requests, a forged cookie', async () => {
    t = await createTestApp();
    await obtainCode(t, { scope: 'realms' });

    // A scope not yet trusted: the consent page.
    const more = await t.agent.get('/oauth/authorize').query(query({ scope: 'realms profile' }));
    expect(more.status).toBe(200);
    expect(more.text).toContain('profile');
    // That request is now pending in the session; a trusted one ends it: a consent form of the
    // earlier request cannot be answered any more.
    const trusted = await t.agent.get('/oauth/authorize').query(query({ scope: 'realms' }));
    expect(trusted.status).toBe(302);
    expect(redirectParams(trusted.headers.location!).code).toBeDefined();

    // An unregistered redirect URI is still a page, never a redirect.
    const bad = await t.agent.get('/oauth/authorize').query(query({ redirect_uri: 'https://evil.example/' }));
    expect(bad.status).toBe(400);
    expect(bad.headers.location).toBeUndefined();
    // A redirectable error still goes back to the client.
    const unsupported = await t.agent.get('/oauth/authorize').query(query({ response_type: 'id_token' }));
    expect(redirectParams(unsupported.headers.location!).error).toBe('unsupported_response_type');

    // A cookie signed with another secret is no session at all: the provider selection page.
    const cookie = `openid_oauth_bridge.sid=s%3Aforged.${'A'.repeat(43)}`;
    const forged = await supertest(t.baseUrl).get('/oauth/authorize').set('Cookie', cookie).query(query());
    expect(forged.status).toBe(200);
    expect(forged.text).toContain('Development provider');
  });

  it('slides the stored expiry once it has moved by 1% of the lifetime', async () => {
    const { storage, calls } = countingStorage();
    let now = Date.now();
    t = await createTestApp({
      storage,
      clock: () => now,
      session: { secret: 'a test session secret that is long enough', maxAge: 3600 },
    });
    const first = await authorizeWithLogin(t, query());
    expect(first.status).toBe(200);
    now += 1000;
    // Not trusted yet: the consent form. Trust it (a changed session, written once), then come
    // back 37 s (more than 1%) later.
    const beforeConsent = calls.set;
    expect((await answerConsent(t, first.text, 'allow')).status).toBe(303);
    expect(calls.set - beforeConsent).toBe(1);
    const before = calls.set;
    const realNow = Date.now;
    Date.now = () => realNow() + 37_000;
    try {
      now += 37_000;
      const again = await t.agent.get('/oauth/authorize').query(query());
      expect(again.status).toBe(302);
      expect(calls.set - before).toBe(1);
      const soon = await t.agent.get('/oauth/authorize').query(query());
      expect(soon.status).toBe(302);
      expect(calls.set - before).toBe(1);
    } finally {
      Date.now = realNow;
    }
  });
});

describe('the consent answer', () => {
  it('reads the client once before the grant is saved and once after (a removal racing it)', async () => {
    const { storage, calls } = countingStorage();
    t = await createTestApp({ storage });
    const consent = await authorizeWithLogin(t, query());
    expect(consent.status).toBe(200);
    const before = calls.clients;
    expect((await answerConsent(t, consent.text, 'allow')).status).toBe(303);
    expect(calls.clients - before).toBe(2);
  });
});

describe('the consented user under a storage outage', () => {
  it.each([
    ['reading the grant', 'grants'],
    ['storing the code', 'codes'],
  ] as const)(
    'answers with the endpoint error page (503) when %s fails, not a hang or a stack trace',
    async (_name, failing) => {
      const storage = memoryStorage();
      let down = false;
      const outage = () => Promise.reject(new StorageUnavailableError('storage is down'));
      const { grants, ephemeral } = storage;
      const failingStorage: MemoryStorage = {
        ...storage,
        grants: {
          ...grants,
          list: (filter) => (down && failing === 'grants' ? outage() : grants.list(filter)),
        },
        ephemeral: {
          ...ephemeral,
          set: (key, ...rest) =>
            down && failing === 'codes' && key.startsWith(ephemeralKeys.code(''))
              ? outage()
              : ephemeral.set(key, ...rest),
        },
      };
      t = await createTestApp({ storage: failingStorage });
      await obtainCode(t);
      down = true;
      const res = await t.agent.get('/oauth/authorize').query(query());
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBeDefined();
      expect(res.headers.location).toBeUndefined();
      expect(res.text).not.toMatch(/storage is down|at .*\.ts/);
    },
  );
});
