import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuthorizationServerOptions } from '../../../src/index.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../../support/app.js';
import { pathOf, signInAtProvider } from '../../support/flow.js';
import {
  startCanary,
  startEndlessServer,
  startServer,
  startSilentServer,
  type TestServer,
} from '../../support/openid-servers.js';

// Also proven elsewhere: an opIdentifier or openid_identifier that is not configured is refused
// before anything is contacted, whatever the login strategy (authorize.errors.test.ts,
// login.custom-strategy.test.ts); the relying party refuses every tampered field, replays, login
// CSRF and oversized callbacks, most without any outbound request (openid.relying-party.*.test.ts);
// discovery stays within the provider's origin, time and size limits (openid.discovery.limits.test.ts,
// openid.bounded-fetch.test.ts).

let t: TestApp;
const servers: TestServer[] = [];
afterEach(async () => {
  await t.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function serve(server: Promise<TestServer>) {
  servers.push(await server);
  return servers.at(-1)!;
}

const codeQuery = {
  response_type: 'code',
  client_id: 'code-client',
  redirect_uri: CODE_REDIRECT,
  state: 's',
};

/** Counts users written, so a test can prove a refused login created none. */
function countUserWrites(app: TestApp) {
  let writes = 0;
  const findOrCreate = app.storage.users.findOrCreate.bind(app.storage.users);
  app.storage.users.findOrCreate = (...args) => (writes++, findOrCreate(...args));
  return () => writes;
}

/** Begins a login at the development provider; resolves the genuine callback URL, unused. */
async function genuineCallback(): Promise<URL> {
  const start = await t.agent
    .get('/oauth/authorize')
    .query({ ...codeQuery, opIdentifier: t.provider.identifier });
  const toProvider = await t.agent.get(pathOf(start.headers.location!));
  return new URL(await signInAtProvider(toProvider.headers.location!, 'alice'));
}

describe('OpenID providers: a forged callback contacts nothing off the allow-list', () => {
  it.each([
    [
      'op_endpoint at the canary',
      (cb: URL, canary: string) => cb.searchParams.set('openid.op_endpoint', `${canary}/op`),
    ],
    [
      'claimed_id and identity at the canary',
      (cb: URL, canary: string) => {
        cb.searchParams.set('openid.claimed_id', `${canary}/alice`);
        cb.searchParams.set('openid.identity', `${canary}/alice`);
      },
    ],
    [
      'return_to at the canary',
      (cb: URL, canary: string) => cb.searchParams.set('openid.return_to', `${canary}/cb`),
    ],
    ['no openid.ns', (cb: URL) => cb.searchParams.delete('openid.ns')],
  ])('%s: a page with "Try again", no outbound request, no user written', async (_name, forge) => {
    t = await createTestApp();
    const canary = await serve(startCanary());
    const writes = countUserWrites(t);
    const callback = await genuineCallback();
    forge(callback, canary.url);
    const res = await t.agent.get(pathOf(callback.href));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('Try again');
    expect(canary.hits()).toBe(0);
    expect(writes()).toBe(0);
  });

  it('refuses a wholly fabricated callback in a browser with no login in progress', async () => {
    t = await createTestApp();
    const canary = await serve(startCanary());
    const writes = countUserWrites(t);
    const forged = new URLSearchParams({
      'openid.ns': 'http://specs.openid.net/auth/2.0',
      'openid.mode': 'id_res',
      'openid.op_endpoint': `${canary.url}/op`,
      'openid.claimed_id': `${canary.url}/alice`,
      'openid.identity': `${canary.url}/alice`,
      'openid.return_to': `${t.baseUrl}/oauth/login/callback`,
      'openid.response_nonce': `${new Date().toISOString().slice(0, 19)}Zabc`,
      'openid.assoc_handle': 'x',
      'openid.signed': 'op_endpoint,claimed_id,identity,return_to,response_nonce,assoc_handle',
      'openid.sig': 'AAAA',
    });
    for (const agent of [supertest(t.baseUrl), t.agent]) {
      if (agent === t.agent) await t.agent.get('/oauth/authorize').query(codeQuery);
      const res = await agent.get(`/oauth/login/callback?${forged}`);
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
    }
    expect(canary.hits()).toBe(0);
    expect(writes()).toBe(0);
  });
});

describe('OpenID providers: a slow, silent or endless provider', () => {
  async function appWith(provider: TestServer, login: AuthorizationServerOptions['login']) {
    t = await createTestApp({
      providers: [{ name: 'Hostile', identifier: `${provider.url}/` }],
      login,
    });
  }

  /**
   * Starts a login at the hostile provider and, while it hangs, asks the server for other things:
   * they must be answered first. Resolves the login's answer and how long it took.
   */
  async function loginWhileOthersAreServed() {
    const start = await t.agent.get('/oauth/authorize').query({ ...codeQuery, opIdentifier: 'Hostile' });
    expect(start.status).toBe(302);
    let loginDone = false;
    const started = Date.now();
    const login = t.agent.get(pathOf(start.headers.location!)).then((res) => {
      loginDone = true;
      return res;
    });
    const others = await Promise.all([
      supertest(t.baseUrl).get('/'),
      supertest(t.baseUrl).get('/oauth/authorize').query(codeQuery),
      supertest(t.baseUrl).post('/oauth/token').type('form').send({ grant_type: 'authorization_code' }),
    ]);
    expect(others.map((r) => r.status)).toEqual([200, 200, 401]);
    expect(loginDone).toBe(false);
    const res = await login;
    return { res, elapsed: Date.now() - started };
  }

  function expectClearPage(res: supertest.Response) {
    // 502: the provider, not the request, failed.
    expect(res.status).toBe(502);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('Hostile could not be reached.');
    expect(res.text).toContain('Try again');
  }

  it('ends a login at a provider that never answers at login.timeoutMs', async () => {
    const silent = await serve(startSilentServer());
    await appWith(silent, { timeoutMs: 1000 });
    const { res, elapsed } = await loginWhileOthersAreServed();
    expectClearPage(res);
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(6000);
  });

  it('ends a login at a provider that answers too slowly', async () => {
    const slow = await serve(
      startServer((_req, res) => void setTimeout(() => res.end('<html></html>'), 3000)),
    );
    await appWith(slow, { timeoutMs: 1000 });
    const { res, elapsed } = await loginWhileOthersAreServed();
    expectClearPage(res);
    expect(elapsed).toBeLessThan(2900);
  });

  it('ends a login at a provider that sends an endless body, by size or by time', async () => {
    const endless = await serve(startEndlessServer('<!-- more -->'.repeat(20), 5));
    await appWith(endless, { timeoutMs: 1500, maxResponseBytes: 4096 });
    const { res, elapsed } = await loginWhileOthersAreServed();
    expectClearPage(res);
    expect(elapsed).toBeLessThan(6000);
  });
});
