/**
 * Events, observed for each flow: what is reported, with which fields, and that no payload ever
 * carries a token, code or secret; listeners that fail never break a request.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { emit } from '../../src/events/index.js';
import { memoryStorage, type ServerEvent, type ServerEventOf, type Storage } from '../../src/index.js';
import type { ServerEventType } from '../../src/events/types.js';
import { ephemeralKeys } from '../../src/storage/keys.js';
import { createTestApp, IMPLICIT_REDIRECT, redirectParams, type TestApp } from '../support/app.js';
import {
  basicAuth,
  callRealms,
  mountClientEndpoints,
  obtainTokens,
  postAs,
  recordEvents,
  refreshWith,
} from '../support/endpoints.js';
import {
  answerConsent,
  authorizeWithLogin,
  exchangeCode,
  obtainCode,
  pathOf,
  signInAtProvider,
} from '../support/flow.js';

let t: TestApp;
let events: ServerEvent[];
afterEach(() => t?.close());

async function start(overrides: Parameters<typeof createTestApp>[0] = {}) {
  t = await createTestApp(overrides);
  mountClientEndpoints(t);
  return recordEvents(t);
}

/** The events of these types, in order. */
const only = <T extends ServerEventType>(events: ServerEvent[], ...types: T[]) =>
  events.filter((event): event is ServerEventOf<T> => (types as string[]).includes(event.type));

/** No payload carries any of these values, whole or in part of a longer string. */
function expectNoSecrets(events: ServerEvent[], secrets: string[]): void {
  const serialized = JSON.stringify(events, (_key, value: unknown) =>
    value instanceof Error ? { message: value.message, stack: value.stack } : value,
  );
  for (const secret of secrets) expect(serialized).not.toContain(secret);
}

const LOCAL = /^(::ffff:)?127\.0\.0\.1$/;

/**
 * Memory storage slow to answer a read of grants: requests that revoke a grant at once overlap
 * between their read and their save, and each sees the grant standing.
 */
function slowToAnswerGrantReads(): Storage {
  const storage = memoryStorage();
  const list = storage.grants.list.bind(storage.grants);
  storage.grants.list = async (filter) => {
    const rows = await list(filter);
    await new Promise((resolve) => setTimeout(resolve, 25));
    return rows;
  };
  return storage;
}

/** The code client's grant is revoked, and `type` was reported for it exactly once. */
async function expectRevokedAndReportedOnce(
  type: 'code.replayed' | 'refresh_token.reused',
  grantId: string,
): Promise<void> {
  expect(only(events, type)).toMatchObject([{ grantId }]);
  const [grant] = await t.storage.grants.list({ clientId: 'code-client' });
  expect(grant).toMatchObject({ grantId, revokedAt: expect.any(Number) });
}

describe('events of the authorization code flow', () => {
  it('reports login, consent, code and token, with user, client, grant and address', async () => {
    events = await start();
    const { code } = await obtainCode(t);
    const tokens = (await exchangeCode(t, code)).body;
    const user = await t.storage.users.findOrCreate(
      { identifier: t.provider.userUrl('alice'), provider: 'openid' },
      'unused',
      0,
    );

    expect(events.map((e) => e.type)).toEqual([
      'login.succeeded',
      'consent.given',
      'code.issued',
      'token.issued',
    ]);
    const [login, consent, issued, token] = events;
    expect(login).toMatchObject({
      userId: user.id,
      provider: 'Development provider',
      clientId: 'code-client',
    });
    expect(consent).toMatchObject({
      userId: user.id,
      clientId: 'code-client',
      scopes: ['realms', 'profile'],
    });
    expect(issued).toMatchObject({ userId: user.id, clientId: 'code-client', pkce: false });
    expect(token).toMatchObject({
      grantType: 'authorization_code',
      userId: user.id,
      clientId: 'code-client',
      grantId: (issued as Extract<ServerEvent, { type: 'code.issued' }>).grantId,
      refreshToken: true,
    });
    for (const event of events) {
      expect(event.ip).toMatch(LOCAL);
      expect(Math.abs(event.at - Date.now())).toBeLessThan(60_000);
    }
    expectNoSecrets(events, [code, tokens.access_token, tokens.refresh_token, t.codeClient.clientSecret]);
  });

  it('reports a refused consent', async () => {
    events = await start();
    const consent = await authorizeWithLogin(t, {
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
    });
    await answerConsent(t, consent.text, 'deny');
    expect(only(events, 'consent.denied', 'consent.given', 'code.issued')).toMatchObject([
      { type: 'consent.denied', clientId: 'code-client' },
    ]);
  });
});

describe('events of the implicit flow', () => {
  it('reports the token issued in the fragment, without the token', async () => {
    events = await start();
    const consent = await authorizeWithLogin(t, {
      response_type: 'token',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
      state: 's',
    });
    const location = (await answerConsent(t, consent.text, 'allow')).headers.location!;
    expect(events.map((e) => e.type)).toEqual(['login.succeeded', 'consent.given', 'token.issued']);
    expect(events[2]).toMatchObject({
      grantType: 'implicit',
      clientId: 'implicit-client',
      refreshToken: false,
    });
    expectNoSecrets(events, [redirectParams(location).access_token!]);
  });
});

describe('events of refresh, replay and reuse', () => {
  it('reports a refresh', async () => {
    events = await start();
    const tokens = await obtainTokens(t);
    const refreshed = await refreshWith(t, tokens.refresh_token);
    expect(only(events, 'token.refreshed')).toMatchObject([
      { clientId: 'code-client', rotated: false, scopes: ['realms', 'profile'] },
    ]);
    expectNoSecrets(events, [tokens.refresh_token, refreshed.body.access_token]);
  });

  it('reports a rotated refresh, then the reuse of the old refresh token and what it revoked', async () => {
    events = await start({ tokens: { rotateRefreshTokens: true } });
    const tokens = await obtainTokens(t);
    const rotated = await refreshWith(t, tokens.refresh_token);
    expect(rotated.status).toBe(200);
    expect((await refreshWith(t, tokens.refresh_token)).status).toBe(400);
    const grantId = only(events, 'token.issued')[0]!.grantId;
    expect(only(events, 'token.refreshed', 'refresh_token.reused')).toMatchObject([
      { type: 'token.refreshed', rotated: true, grantId },
      { type: 'refresh_token.reused', clientId: 'code-client', grantId },
    ]);
    expectNoSecrets(events, [tokens.refresh_token, rotated.body.refresh_token]);
  });

  it('reports a rotated refresh token reused by several requests at once one time', async () => {
    events = await start({ storage: slowToAnswerGrantReads(), tokens: { rotateRefreshTokens: true } });
    const tokens = await obtainTokens(t);
    expect((await refreshWith(t, tokens.refresh_token)).status).toBe(200);
    const reuses = await Promise.all([1, 2, 3].map(() => refreshWith(t, tokens.refresh_token)));
    expect(reuses.map((r) => r.status)).toEqual([400, 400, 400]);
    await expectRevokedAndReportedOnce('refresh_token.reused', only(events, 'token.issued')[0]!.grantId);
  });

  it('reports a replayed code and the tokens it revoked', async () => {
    events = await start();
    const { code } = await obtainCode(t);
    expect((await exchangeCode(t, code)).status).toBe(200);
    expect((await exchangeCode(t, code)).status).toBe(400);
    const grantId = only(events, 'code.issued')[0]!.grantId;
    expect(only(events, 'code.replayed')).toMatchObject([
      { clientId: 'code-client', presentedBy: 'code-client', grantId },
    ]);
    expectNoSecrets(events, [code]);
  });

  it('reports a code replayed by several requests at once one time: each revokes, one reports', async () => {
    events = await start({ storage: slowToAnswerGrantReads() });
    const { code } = await obtainCode(t);
    expect((await exchangeCode(t, code)).status).toBe(200);
    const replays = await Promise.all([1, 2, 3].map(() => exchangeCode(t, code)));
    expect(replays.map((r) => r.status)).toEqual([400, 400, 400]);
    await expectRevokedAndReportedOnce('code.replayed', only(events, 'code.issued')[0]!.grantId);
  });

  it('reports a code replayed by two requests at once when the first to mark the grant reads it last', async () => {
    // The first replay to mark the grant revoked is slow to read it (a busy connection, another
    // instance): the second marks it, reads it standing and saves it revoked first. The first then
    // reads it revoked. One of them must still report it.
    const storage = memoryStorage();
    const marker = ephemeralKeys.revokedGrant('');
    let marked = false;
    let slowed = false;
    let savedRevoked: () => void = () => {};
    const revoked = new Promise<void>((resolve) => {
      savedRevoked = () => resolve();
    });
    const { ephemeral, grants } = storage;
    const [set, add, list, save] = [
      ephemeral.set.bind(ephemeral),
      ephemeral.add.bind(ephemeral),
      grants.list.bind(grants),
      grants.save.bind(grants),
    ];
    ephemeral.set = (key, value, expiresAt, now) => {
      if (key.startsWith(marker)) marked = true;
      return set(key, value, expiresAt, now);
    };
    ephemeral.add = (key, value, expiresAt, now) => {
      if (key.startsWith(marker)) marked = true;
      return add(key, value, expiresAt, now);
    };
    grants.list = async (filter) => {
      if (marked && !slowed) {
        slowed = true;
        await Promise.race([revoked, new Promise((resolve) => setTimeout(resolve, 1000))]);
      }
      return list(filter);
    };
    grants.save = async (grant) => {
      await save(grant);
      if (grant.revokedAt !== null) savedRevoked();
    };
    events = await start({ storage });
    const { code } = await obtainCode(t);
    expect((await exchangeCode(t, code)).status).toBe(200);
    const replays = await Promise.all([1, 2].map(() => exchangeCode(t, code)));
    expect(replays.map((r) => r.status)).toEqual([400, 400]);
    expect(slowed).toBe(true);
    const grantId = only(events, 'code.issued')[0]!.grantId;
    expect(only(events, 'code.replayed')).toMatchObject([{ grantId }]);
  });
});

describe('events of failures', () => {
  it('reports failed client authentication at each endpoint, with the id presented and no secret', async () => {
    events = await start();
    const wrong = 'a-wrong-secret-that-must-not-be-reported';
    await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: 'code-client',
      client_secret: wrong,
    });
    await t.agent
      .post('/oauth/revoke')
      .set('Authorization', basicAuth('nobody', wrong))
      .type('form')
      .send({ token: 'x' });
    await t.agent.post('/oauth/introspect').type('form').send({ token: 'x' });
    expect(only(events, 'client.authentication_failed')).toEqual([
      {
        type: 'client.authentication_failed',
        clientId: 'code-client',
        endpoint: 'token',
        clientKind: 'confidential',
        ip: expect.stringMatching(LOCAL),
        requestId: expect.stringMatching(/^[\w-]+$/),
        at: expect.any(Number),
      },
      {
        type: 'client.authentication_failed',
        clientId: 'nobody',
        endpoint: 'revocation',
        clientKind: 'unknown',
        ip: expect.stringMatching(LOCAL),
        requestId: expect.stringMatching(/^[\w-]+$/),
        at: expect.any(Number),
      },
      {
        type: 'client.authentication_failed',
        endpoint: 'introspection',
        clientKind: 'unknown',
        ip: expect.stringMatching(LOCAL),
        requestId: expect.stringMatching(/^[\w-]+$/),
        at: expect.any(Number),
      },
    ]);
    expectNoSecrets(events, [wrong]);
  });

  it('reports a failed login: cancelled at the provider', async () => {
    events = await start();
    const begin = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
      opIdentifier: t.provider.identifier,
    });
    const toProvider = await t.agent.get(pathOf(begin.headers.location!));
    const callback = await signInAtProvider(toProvider.headers.location!, 'alice', 'cancel');
    expect((await t.agent.get(pathOf(callback))).status).toBe(400);
    expect(events).toMatchObject([
      {
        type: 'login.failed',
        outcome: 'failed',
        clientId: 'code-client',
        reason: expect.any(String),
        provider: 'Development provider',
      },
    ]);
    expect(only(events, 'login.succeeded')).toEqual([]);
  });

  it('reports server errors with what was thrown, at the token endpoint and behind requireBearer', async () => {
    const base = memoryStorage();
    const outage = new Error('database unreachable');
    let failing = false;
    const storage: Storage = {
      ...base,
      tokens: {
        ...base.tokens,
        find: (hash) => (failing ? Promise.reject(outage) : base.tokens.find(hash)),
      },
    };
    events = await start({ storage });
    const tokens = await obtainTokens(t);
    failing = true;
    expect((await callRealms(t, tokens.access_token)).status).toBe(500);
    expect((await refreshWith(t, tokens.refresh_token)).status).toBe(500);
    expect((await postAs(t, '/oauth/introspect', { token: tokens.access_token })).status).toBe(500);
    expect(only(events, 'server.error')).toEqual([
      {
        type: 'server.error',
        endpoint: 'bearer',
        status: 500,
        requestId: expect.stringMatching(/^[\w-]+$/),
        error: outage,
        ip: expect.stringMatching(LOCAL),
        at: expect.any(Number),
      },
      {
        type: 'server.error',
        endpoint: 'token',
        status: 500,
        requestId: expect.stringMatching(/^[\w-]+$/),
        error: outage,
        ip: expect.stringMatching(LOCAL),
        at: expect.any(Number),
      },
      {
        type: 'server.error',
        endpoint: 'introspection',
        status: 500,
        requestId: expect.stringMatching(/^[\w-]+$/),
        error: outage,
        ip: expect.stringMatching(LOCAL),
        at: expect.any(Number),
      },
    ]);
    expectNoSecrets(events, [tokens.access_token, tokens.refresh_token, t.codeClient.clientSecret]);
  });
});

describe('events of revocation', () => {
  it('reports the revoked grant, and nothing for a token the client does not own', async () => {
    events = await start();
    const tokens = await obtainTokens(t);
    await postAs(t, '/oauth/revoke', { token: 'unknown' });
    await postAs(t, '/oauth/revoke', { token: tokens.refresh_token, token_type_hint: 'refresh_token' });
    const grantId = only(events, 'token.issued')[0]!.grantId;
    expect(only(events, 'token.revoked')).toMatchObject([
      { clientId: 'code-client', grantId, tokenType: 'refresh_token' },
    ]);
    expectNoSecrets(events, [tokens.refresh_token, tokens.access_token]);
  });

  it('lets the library report consent.revoked through emit(), with the time filled in', async () => {
    events = await start();
    emit(t.server, {
      type: 'consent.revoked',
      userId: 'u1',
      clientId: 'code-client',
      grantId: 'g1',
      by: 'user',
    });
    expect(events).toEqual([
      {
        type: 'consent.revoked',
        userId: 'u1',
        clientId: 'code-client',
        grantId: 'g1',
        by: 'user',
        at: expect.any(Number),
      },
    ]);
  });
});

describe('listeners', () => {
  it('never break a request: throwing and rejecting listeners are logged, the others still run', async () => {
    const logged: { message: string; details?: Record<string, unknown> }[] = [];
    const logger = {
      warn: () => {},
      error: (message: string, details?: Record<string, unknown>) => void logged.push({ message, details }),
    };
    t = await createTestApp({ logger });
    const seen: string[] = [];
    t.server.events.on('token.issued', () => {
      throw new Error('listener bug');
    });
    t.server.events.on('token.issued', async () => {
      throw new Error('async listener bug');
    });
    t.server.events.on('token.issued', (event) => void seen.push(event.grantType));
    t.server.events.on('*', (event) => void seen.push(`*${event.type}`));

    const tokens = await obtainTokens(t);
    expect((await callRealms(t, tokens.access_token)).status).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toContain('authorization_code');
    expect(seen).toContain('*token.issued');
    expect(logged.map((line) => line.message)).toEqual([
      'event listener failed (token.issued)',
      'event listener failed (token.issued)',
    ]);
    expect(logged.map((line) => (line.details?.error as Error).message).sort()).toEqual([
      'async listener bug',
      'listener bug',
    ]);
  });

  it('are removed by the function on() returns, or by off()', async () => {
    t = await createTestApp();
    const seen: ServerEvent['type'][] = [];
    const listener = (event: ServerEvent) => void seen.push(event.type);
    const stop = t.server.events.on('*', listener);
    t.server.events.on('login.succeeded', listener);
    expect(t.server.events.listenerCount('*')).toBe(1);
    stop();
    t.server.events.off('login.succeeded', listener);
    expect(t.server.events.listenerCount('*')).toBe(0);
    expect(t.server.events.listenerCount('login.succeeded')).toBe(0);
    await obtainCode(t);
    expect(seen).toEqual([]);
    expect(() => t.server.events.on('*', 'nope' as never)).toThrow(TypeError);
  });
});
