/**
 * The login session's cookie and lifetime: `__Host-` over https, a request carrying two cookies
 * of the session's name is not authenticated, a session ends at its absolute lifetime however
 * active it is and after its idle timeout whatever the store keeps.
 */
import express from 'express';
import session from 'express-session';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import {
  authorizeRouter,
  createAuthorizationServer,
  memoryStorage,
  registerClient,
} from '../../src/index.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { obtainCode } from '../support/flow.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const authorizeQuery = (clientId: string, state = 's') => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: CODE_REDIRECT,
  state,
});

describe('the session cookie', () => {
  it('over https: __Host- prefixed, Secure, Path=/, no Domain, HttpOnly, SameSite=Lax', async () => {
    const storage = memoryStorage();
    const { clientId } = await registerClient(storage, {
      applicationName: 'Printer',
      redirectUri: CODE_REDIRECT,
    });
    const server = createAuthorizationServer({
      baseUrl: 'https://auth.example.com/oauth-base',
      storage,
      providers: [{ name: 'Example', identifier: 'https://id.example.com/' }],
      session: { secret: 'a test session secret that is long enough' },
    });
    const app = express().set('trust proxy', true);
    app.use('/oauth-base', authorizeRouter(server));
    const res = await supertest(app)
      .get('/oauth-base/oauth/authorize')
      .set('X-Forwarded-Proto', 'https')
      .query(authorizeQuery(clientId));
    expect(res.status).toBe(200);
    const [cookie] = res.headers['set-cookie'] as unknown as string[];
    expect(cookie).toMatch(/^__Host-openid_oauth_bridge\.sid=s%3A/);
    expect(cookie).toContain('Path=/;');
    expect(cookie).toContain('Secure');
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).not.toMatch(/Domain=/i);
  });

  it('two cookies of the session name: neither is trusted, the request has no session', async () => {
    t = await createTestApp();
    const started = await t.agent.get('/oauth/authorize').query(authorizeQuery(t.codeClient.clientId));
    expect(started.status).toBe(200);
    const own = /openid_oauth_bridge\.sid=[^;]+/.exec(started.headers['set-cookie']![0]!)![0];
    const resume = (cookie: string) =>
      supertest(t!.baseUrl).get('/oauth/authorize/resume').set('Cookie', cookie);
    // The session alone: the sign-in in progress is found.
    expect((await resume(own)).status).toBe(200);
    // The same cookie shadowed by a planted one (a sibling subdomain's, or a narrower path's),
    // in either order: no session at all, so nothing of either is used.
    const planted = 'openid_oauth_bridge.sid=s%3Aplanted.signature';
    for (const cookie of [`${planted}; ${own}`, `${own}; ${planted}`]) {
      const refused = await resume(cookie);
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('no sign-in in progress');
    }
  });

  it('two cookies of the session name on the answered-at-once path: no code is issued', async () => {
    t = await createTestApp();
    await obtainCode(t);
    const query = authorizeQuery(t.codeClient.clientId);
    const signedIn = await t.agent.get('/oauth/authorize').query(query);
    expect(signedIn.status).toBe(302);
    const own = /openid_oauth_bridge\.sid=[^;]+/.exec(
      (await t.agent.jar.getCookies({ domain: '127.0.0.1', path: '/', secure: false, script: false }))
        .map((c) => `${c.name}=${c.value}`)
        .join('; '),
    )![0];
    const shadowed = await supertest(t.baseUrl)
      .get('/oauth/authorize')
      .query(query)
      .set('Cookie', `${own}; openid_oauth_bridge.sid=s%3Aplanted.signature`);
    expect(shadowed.status).toBe(200);
    expect(shadowed.headers.location).toBeUndefined();
  });
});

describe('the session lifetime', () => {
  it('an active session ends at the absolute lifetime: the user signs in again', async () => {
    let skew = 0;
    t = await createTestApp({
      clock: () => Date.now() + skew,
      session: { secret: 'a test session secret that is long enough', maxAge: 3600, absoluteMaxAge: 7200 },
    });
    await obtainCode(t);
    const query = authorizeQuery(t.codeClient.clientId);
    // Active every 50 minutes: the idle timeout never ends it.
    for (const minutes of [50, 100]) {
      skew = minutes * 60_000;
      expect((await t.agent.get('/oauth/authorize').query(query)).status, `at ${minutes} min`).toBe(302);
    }
    skew = 120 * 60_000;
    const late = await t.agent.get('/oauth/authorize').query(query);
    expect(late.status).toBe(200);
    expect(late.text).toContain('Development provider'); // the selection page: sign in again
  });

  it('an idle session ends on the server, whatever its store keeps', async () => {
    let skew = 0;
    t = await createTestApp({
      clock: () => Date.now() + skew,
      // express-session's MemoryStore keeps a session without an expiry for ever.
      session: {
        secret: 'a test session secret that is long enough',
        maxAge: 600,
        store: new session.MemoryStore(),
      },
    });
    await obtainCode(t);
    const query = authorizeQuery(t.codeClient.clientId);
    for (const minutes of [9, 18, 27]) {
      skew = minutes * 60_000;
      expect((await t.agent.get('/oauth/authorize').query(query)).status, `at ${minutes} min`).toBe(302);
    }
    skew = 38 * 60_000;
    const idle = await t.agent.get('/oauth/authorize').query(query);
    expect(idle.status).toBe(200);
    expect(idle.text).toContain('Development provider'); // the selection page: sign in again
  });

  it('the cookie lasts the browser session, and is not sent again with each answer', async () => {
    t = await createTestApp();
    const { location } = await obtainCode(t);
    expect(location).toBeDefined();
    const again = await t.agent.get('/oauth/authorize').query(authorizeQuery(t.codeClient.clientId));
    expect(again.status).toBe(302);
    expect(again.headers['set-cookie']).toBeUndefined();
    const fresh = await supertest(t.baseUrl)
      .get('/oauth/authorize')
      .query(authorizeQuery(t.codeClient.clientId));
    const [cookie] = fresh.headers['set-cookie'] as unknown as string[];
    expect(cookie).not.toMatch(/Expires=|Max-Age=/i);
  });

  it('an absolute lifetime shorter than the idle timeout is refused at start-up', () => {
    expect(() =>
      createAuthorizationServer({
        baseUrl: 'https://auth.example.com',
        storage: memoryStorage(),
        providers: [{ name: 'Example', identifier: 'https://id.example.com/' }],
        session: { secret: 'a test session secret that is long enough', maxAge: 3600, absoluteMaxAge: 600 },
      }),
    ).toThrow(/session\.absoluteMaxAge: must be at least session\.maxAge/);
  });
});
