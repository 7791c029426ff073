import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/crypto/secrets.js';
import { memoryStorage, registerClient, type Storage } from '../../src/index.js';
import { CODE_REDIRECT, createTestApp, expectOAuthError, type TestApp } from '../support/app.js';
import { appOnFreshDatabase, itOn, sqlEngines, type SqlEngine } from '../support/databases.js';
import {
  answerConsent,
  authorizeWithLogin,
  deliverCallback,
  exchangeCode,
  obtainTokens,
  pathOf,
  refreshWith,
  signInAtProvider,
} from '../support/flow.js';
import { tokenWorks } from '../support/grants.js';

/**
 * The third outside review's storage findings (issue 29), on memory, SQLite and PostgreSQL: each
 * test failed on the code before its fix.
 */
const { engines, cleanup } = await sqlEngines('third-round');
afterAll(cleanup);

/** Storage whose writes of one kind can be made to fail once, as a database blip would. */
function failingOnce(storage: Storage) {
  const state = { failReplacedMark: false, tokenSaves: 0 };
  const wrapped: Storage = {
    ...storage,
    tokens: {
      ...storage.tokens,
      save: async (token) => {
        state.tokenSaves++;
        if (state.failReplacedMark && token.type === 'refresh_token' && token.rotatedAt !== null) {
          state.failReplacedMark = false;
          throw new Error('the connection dropped (test)');
        }
        return storage.tokens.save(token);
      },
    },
  };
  return { storage: wrapped, state };
}

const ROTATION_MARKER_MS = 86_400_000;

const checks = {
  /** Finding 2: a used code presented by another client revokes nothing. */
  async crossClientReplay(t: TestApp) {
    const other = await registerClient(t.storage, {
      clientId: 'other-client',
      applicationName: 'Another App',
      redirectUri: CODE_REDIRECT,
      scopes: ['realms'],
    });
    const { code } = await obtainCodeOnly(t);
    const tokens = (await exchangeCode(t, code)).body;
    const byOther = await exchangeCode(t, code, {
      client_id: other.clientId,
      client_secret: other.clientSecret!,
    });
    expectOAuthError(byOther, 'invalid_grant');
    expect(await tokenWorks(t.server, tokens.access_token)).toBe(true);
    expect((await refreshWith(t, tokens.refresh_token)).status).toBe(200);
    // The code's own client replaying it still revokes the grant.
    expectOAuthError(await exchangeCode(t, code), 'invalid_grant');
    expect(await tokenWorks(t.server, tokens.access_token)).toBe(false);
  },

  /** Finding 4: the exchange states the scope actually granted. */
  async exchangeScope(t: TestApp) {
    const { code } = await obtainCodeOnly(t, { scope: 'realms profile' });
    await t.storage.clients.update!(t.codeClient.clientId, { scopes: ['realms'], defaultScopes: null });
    const res = await exchangeCode(t, code);
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('realms');
    const stored = await t.storage.tokens.find(hashSecret(res.body.access_token));
    expect(stored?.token.scopes).toEqual(['realms']);
  },

  /** Finding 5: a pending authorization never completes to a redirect URI the client no longer has. */
  async resumeRechecksClient(t: TestApp) {
    const query = {
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      state: 's',
    };
    // Pending at the provider: the operator changes the redirect URI meanwhile.
    const start = await t.agent.get('/oauth/authorize').query(query);
    expect(start.status).toBe(200);
    const href = /<a href="([^"]+)">/.exec(start.text)![1]!.replaceAll('&amp;', '&');
    const toProvider = await t.agent.get(pathOf(href));
    await t.storage.clients.update!(t.codeClient.clientId, { redirectUri: 'https://moved.example/cb' });
    const callback = await signInAtProvider(toProvider.headers.location!, 'alice');
    const resumed = await deliverCallback(t.agent, pathOf(callback));
    expect(resumed.status).toBe(403);
    expect(resumed.headers.location).toBeUndefined();
    expect(resumed.text).toContain('no longer registered');

    // On the consent page: the decision re-checks the client too.
    await t.storage.clients.update!(t.codeClient.clientId, { redirectUri: CODE_REDIRECT });
    const consent = await t.agent.get('/oauth/authorize').query(query);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('name="decision"');
    await t.storage.clients.update!(t.codeClient.clientId, { redirectUri: 'https://moved.example/cb' });
    const decided = await answerConsent(t, consent.text, 'allow');
    expect(decided.status).toBe(403);
    expect(decided.headers.location).toBeUndefined();

    // A scope the operator took from the client meanwhile: refused there too, never redirected.
    await t.storage.clients.update!(t.codeClient.clientId, { redirectUri: CODE_REDIRECT });
    const asking = await t.agent.get('/oauth/authorize').query({ ...query, scope: 'realms profile' });
    expect(asking.text).toContain('name="decision"');
    await t.storage.clients.update!(t.codeClient.clientId, { scopes: ['realms'], defaultScopes: null });
    const narrowed = await answerConsent(t, asking.text, 'allow');
    expect(narrowed.status).toBe(403);
    expect(narrowed.headers.location).toBeUndefined();
  },

  /** Finding 6: no row is written before the client is authenticated and the rate limit passes. */
  async noWriteBeforeAuth(t: TestApp, state: { tokenSaves: number }) {
    const tokens = await obtainTokens(t);
    const before = state.tokenSaves;
    for (let i = 0; i < 3; i++) {
      const res = await refreshWith(t, tokens.refresh_token, { client_secret: 'wrong' });
      expect(res.status).toBe(401);
    }
    expect(state.tokenSaves).toBe(before);
  },
};

/** Finding 3: a replaced refresh token stays replaced, even when marking it failed once. */
async function rotationFailsClosed(
  t: TestApp,
  state: { failReplacedMark: boolean },
  advance: (ms: number) => void,
) {
  const tokens = await obtainTokens(t);
  state.failReplacedMark = true;
  const rotated = await refreshWith(t, tokens.refresh_token);
  // The mark failed: nothing is handed out (the new tokens are never seen).
  expect(rotated.status).toBeGreaterThanOrEqual(500);
  expect(rotated.body.refresh_token).toBeUndefined();
  advance(ROTATION_MARKER_MS + 1000);
  const later = await refreshWith(t, tokens.refresh_token);
  if (later.status === 200) {
    // Then no new chain was ever handed out before: the old token is the only one, and it is
    // now marked as replaced by this rotation.
    const again = await refreshWith(t, tokens.refresh_token);
    expectOAuthError(again, 'invalid_grant');
    expect(await tokenWorks(t.server, later.body.access_token)).toBe(false);
  } else {
    expectOAuthError(later, 'invalid_grant');
  }
}

/** The code flow up to the code, with consent. */
async function obtainCodeOnly(t: TestApp, extra: Record<string, string> = {}) {
  let res = await authorizeWithLogin(t, {
    response_type: 'code',
    client_id: t.codeClient.clientId,
    redirect_uri: CODE_REDIRECT,
    state: 's',
    ...extra,
  });
  if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
  const code = new URL(res.headers.location!).searchParams.get('code');
  expect(code).toBeTruthy();
  return { code: code! };
}

function clockAt(start: number) {
  let now = start;
  return { clock: () => now, advance: (ms: number) => void (now += ms) };
}

describe('third round (issue 29): memory', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  for (const [name, check] of Object.entries(checks)) {
    it(name, async () => {
      const { storage, state } = failingOnce(memoryStorage());
      t = await createTestApp({ storage });
      await check(t, state);
    });
  }

  it('rotationFailsClosed', async () => {
    const { storage, state } = failingOnce(memoryStorage());
    const time = clockAt(Date.now());
    t = await createTestApp({ storage, clock: time.clock, tokens: { rotateRefreshTokens: true } });
    await rotationFailsClosed(t, state, time.advance);
  });
});

describe.each(engines)('third round (issue 29): $name', (engine: SqlEngine) => {
  const database = appOnFreshDatabase(engine);
  const test = itOn(engine);

  for (const [name, check] of Object.entries(checks)) {
    test(name, async () => {
      let state!: ReturnType<typeof failingOnce>['state'];
      const t = await database.start((sql) => {
        const failing = failingOnce(sql);
        state = failing.state;
        return { storage: failing.storage };
      });
      await check(t, state);
    });
  }

  test('rotationFailsClosed', async () => {
    let state!: ReturnType<typeof failingOnce>['state'];
    const time = clockAt(Date.now());
    const t = await database.start((sql) => {
      const failing = failingOnce(sql);
      state = failing.state;
      return { storage: failing.storage, clock: time.clock, tokens: { rotateRefreshTokens: true } };
    });
    await rotationFailsClosed(t, state, time.advance);
  });
});
