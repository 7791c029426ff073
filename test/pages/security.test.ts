import type { Request } from 'express';
import { Strategy } from 'passport-strategy';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { standingGrant } from '../../src/grants/index.js';
import { registerClient } from '../../src/index.js';
import { type TokenRecord } from '../../src/storage/index.js';
import { CODE_REDIRECT, createTestApp, redirectParams, type TestApp } from '../support/app.js';
import {
  answerConsent,
  authorizeWithLogin,
  exchangeCode,
  parseForm,
  pathOf,
  signInAtProvider,
} from '../support/flow.js';

// Also proven elsewhere (authorize.errors.test.ts): the consent page escapes the application name;
// a wrong CSRF token, another transaction, another Origin or Sec-Fetch-Site is refused and nothing
// is granted; a cancelled login shows a page with "Try again".

let t: TestApp;
afterEach(() => t.close());

const XSS = '<img src=x onerror=alert(1)>';
const ESCAPED = '&lt;img src=x onerror=alert(1)&gt;';
const codeQuery = {
  response_type: 'code',
  client_id: 'code-client',
  redirect_uri: CODE_REDIRECT,
  state: 's1',
};

/** The headers of every page (and redirect) the authorization router sends. */
function expectPageHeaders(res: supertest.Response) {
  expect(res.headers['content-security-policy']).toBe(
    "default-src 'none'; style-src 'unsafe-inline'; img-src data: https:; frame-ancestors 'none'; base-uri 'none'",
  );
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
}

/** The user record of `alice` at the development provider (created if absent). */
const alice = () =>
  t.storage.users.findOrCreate({ identifier: t.provider.userUrl('alice'), provider: 'openid' }, 'unused', 0);

/** Every grant `alice` has for `clientId`, revoked ones included. */
const grantsOfAlice = async (clientId: string) =>
  t.storage.grants.list({ userId: (await alice()).id, clientId });

/** A login strategy that fails with the message in `?message=`, for error-page tests. */
class FailingStrategy extends Strategy {
  name = 'failing';
  override authenticate(
    this: Strategy & { fail(c: unknown): void; redirect(u: string): void },
    req: Request,
  ) {
    if (typeof req.query.message === 'string') return this.fail({ message: req.query.message });
    this.redirect('https://login.example/');
  }
}

describe('pages: every value is escaped', () => {
  it('shows an application named like markup as text on the selection and consent pages', async () => {
    t = await createTestApp();
    await registerClient(t.storage, {
      clientId: 'xss',
      applicationName: XSS,
      redirectUri: 'https://xss.example/cb',
    });
    const query = { response_type: 'code', client_id: 'xss', redirect_uri: 'https://xss.example/cb' };
    const selection = await t.agent.get('/oauth/authorize').query(query);
    const consent = await authorizeWithLogin(t, query);
    for (const page of [selection, consent]) {
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('<img');
      expect(page.text).toContain(ESCAPED);
      expect(page.text).toContain(`<title>`);
      expectPageHeaders(page);
    }
    expect(consent.text).toContain(`<title>Trust ${ESCAPED}?</title>`);
  });

  it('shows a login failure message as text on the error page', async () => {
    t = await createTestApp({ login: { strategy: new FailingStrategy() } });
    await t.agent.get('/oauth/authorize').query(codeQuery);
    await t.agent.get('/oauth/login').query({ openid_identifier: t.provider.identifier });
    const res = await t.agent.get('/oauth/login/callback').query({ message: XSS });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('<img');
    expect(res.text).toContain(ESCAPED);
    expectPageHeaders(res);
  });

  it('echoes nothing of a hostile request on an error page', async () => {
    t = await createTestApp();
    const res = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: '<script>alert(1)</script>',
      redirect_uri: XSS,
      state: XSS,
    });
    expect(res.status).toBe(400);
    expect(res.text).not.toMatch(/<script|<img|alert/);
    expectPageHeaders(res);
  });
});

describe('pages: headers, framing and redirects', () => {
  it('sends no-store, no framing, no referrer and no scripts on every page and redirect', async () => {
    t = await createTestApp();
    const selection = await t.agent.get('/oauth/authorize').query(codeQuery);
    const toLogin = await t.agent
      .get('/oauth/authorize')
      .query({ ...codeQuery, opIdentifier: t.provider.identifier });
    const toProvider = await t.agent.get(pathOf(toLogin.headers.location!));
    const loggedIn = await t.agent.get(pathOf(await signInAtProvider(toProvider.headers.location!, 'alice')));
    const consent = await t.agent.get(pathOf(loggedIn.headers.location!));
    const crossSite = await t.agent
      .post(pathOf(parseForm(consent.text).action))
      .type('form')
      .set('Sec-Fetch-Site', 'cross-site')
      .send({ ...parseForm(consent.text).fields, decision: 'allow' });
    const allowed = await answerConsent(t, consent.text, 'allow');
    const again = await t.agent.get('/oauth/authorize').query(codeQuery);
    const errorPage = await t.agent.get('/oauth/authorize').query({ ...codeQuery, client_id: 'nobody' });
    const errorRedirect = await t.agent.get('/oauth/authorize').query({ ...codeQuery, scope: 'admin' });
    const expected: [supertest.Response, number][] = [
      [selection, 200],
      [toLogin, 302],
      [toProvider, 302],
      [loggedIn, 303],
      [consent, 200],
      [crossSite, 403],
      [allowed, 303],
      [again, 302],
      [errorPage, 400],
      [errorRedirect, 302],
    ];
    for (const [res, status] of expected) {
      expect(res.status).toBe(status);
      expectPageHeaders(res);
    }
  });

  it('redirects after the consent form with 303 and after a GET with 302, never 307 or 308', async () => {
    t = await createTestApp();
    const consent = await authorizeWithLogin(t, codeQuery);
    const allowed = await answerConsent(t, consent.text, 'allow');
    expect(allowed.status).toBe(303);
    const again = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(again.status).toBe(302);
    t.agent = supertest.agent(t.baseUrl);
    const denied = await answerConsent(t, (await authorizeWithLogin(t, codeQuery, 'bob')).text, 'deny');
    expect(denied.status).toBe(303);
  });
});

describe('consent: the decision is taken from server-side state', () => {
  it('ignores client_id, redirect_uri, scope, state and response_type sent in the form', async () => {
    t = await createTestApp();
    await registerClient(t.storage, {
      clientId: 'other-client',
      applicationName: 'Other',
      redirectUri: 'https://evil.example/cb',
      scopes: ['realms', 'profile', 'admin'],
    });
    const consent = await authorizeWithLogin(t, { ...codeQuery, scope: 'realms' });
    const form = parseForm(consent.text);
    const res = await t.agent
      .post(pathOf(form.action))
      .type('form')
      .set('Sec-Fetch-Site', 'same-origin')
      .send({
        ...form.fields,
        decision: 'allow',
        client_id: 'other-client',
        redirect_uri: 'https://evil.example/cb',
        scope: 'realms profile admin',
        state: 'forged',
        response_type: 'token',
      });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.location!);
    expect(location.origin + location.pathname).toBe(CODE_REDIRECT);
    expect(location.hash).toBe('');
    const params = redirectParams(location.href);
    expect(params.state).toBe('s1');
    expect((await standingGrant(t.server, (await alice()).id, 'code-client'))!.scopes).toEqual(['realms']);
    expect(await grantsOfAlice('other-client')).toEqual([]);
    const tokens = await exchangeCode(t, params.code!);
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('realms');
  });

  it('refuses the answer if the client was disabled while the user read the consent page', async () => {
    t = await createTestApp();
    const query = {
      response_type: 'token',
      client_id: 'implicit-client',
      redirect_uri: 'https://spa.example/app/',
      state: 'x',
    };
    const consent = await authorizeWithLogin(t, query);
    expect(consent.status).toBe(200);
    const find = t.storage.clients.find.bind(t.storage.clients);
    t.storage.clients.find = async (id) => {
      const client = await find(id);
      return client && { ...client, disabled: true };
    };
    const issued: TokenRecord[] = [];
    const save = t.storage.tokens.save.bind(t.storage.tokens);
    t.storage.tokens.save = (token) => (issued.push(token), save(token));
    const res = await answerConsent(t, consent.text, 'allow');
    expect(res.status).toBe(403);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('no longer registered');
    expect(issued).toEqual([]);
    expect(await grantsOfAlice('implicit-client')).toEqual([]);
  });

  it("refuses another session's valid form fields, and a post without the session cookie", async () => {
    t = await createTestApp();
    const attackerForm = parseForm((await authorizeWithLogin(t, codeQuery, 'mallory')).text);
    t.agent = supertest.agent(t.baseUrl);
    const victimConsent = await authorizeWithLogin(t, codeQuery, 'alice');
    const victimForm = parseForm(victimConsent.text);
    const forged = await t.agent
      .post(pathOf(victimForm.action))
      .type('form')
      .send({ ...attackerForm.fields, decision: 'allow' });
    const noCookie = await supertest(t.baseUrl)
      .post(pathOf(victimForm.action))
      .type('form')
      .send({ ...victimForm.fields, decision: 'allow' });
    for (const res of [forged, noCookie]) {
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
    }
    expect(await grantsOfAlice('code-client')).toEqual([]);
  });
});

describe('login: no session fixation, internal return targets only', () => {
  it('gives the browser a new session at login; the old session id is worth nothing', async () => {
    t = await createTestApp();
    const attacker = supertest.agent(t.baseUrl);
    const planted = await attacker.get('/oauth/authorize').query(codeQuery);
    const cookie = planted.headers['set-cookie']![0]!.split(';')[0]!;
    expect(cookie).toMatch(/^openid_oauth_bridge\.sid=/);
    // The victim's browser carries the planted session id (cookie injection, a shared computer).
    (
      t.agent as unknown as { jar: { setCookie(c: string, domain: string, path: string): void } }
    ).jar.setCookie(cookie, '127.0.0.1', '/');
    const consent = await authorizeWithLogin(t, codeQuery, 'alice');
    expect(consent.status).toBe(200);
    // The cookie the browser holds now, set by the login's answer.
    const jar = (
      t.agent as unknown as { jar: { getCookie(name: string, access: object): { value: string } } }
    ).jar;
    const held = jar.getCookie('openid_oauth_bridge.sid', {
      domain: '127.0.0.1',
      path: '/',
      secure: false,
      script: false,
    });
    const victimCookie = `openid_oauth_bridge.sid=${held.value}`;
    expect(victimCookie).toMatch(/^openid_oauth_bridge\.sid=s%3A/);
    expect(victimCookie).not.toBe(cookie);
    await answerConsent(t, consent.text, 'allow');
    // The planted id is not logged in: no pending request, and a new request asks for a login.
    expect((await attacker.get('/oauth/authorize/resume')).status).toBe(400);
    const attempt = await attacker.get('/oauth/authorize').query(codeQuery);
    expect(attempt.status).toBe(200);
    expect(attempt.text).toContain('Sign in to continue to Photo Printer');
  });

  it('sends the browser only to the configured provider and back to its own callback', async () => {
    t = await createTestApp();
    await t.agent.get('/oauth/authorize').query(codeQuery);
    const evil = 'https://evil.example/';
    const res = await t.agent
      .get('/oauth/login')
      .query({ openid_identifier: t.provider.identifier, return_to: evil, returnTo: evil, next: evil })
      .set('Host', 'evil.example')
      .set('X-Forwarded-Host', 'evil.example');
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location!);
    expect(location.origin).toBe(new URL(t.provider.endpoint).origin);
    expect(location.searchParams.get('openid.return_to')).toMatch(
      new RegExp(`^${t.baseUrl.replace(/\./g, '\\.')}/oauth/login/callback\\?rp_nonce=[\\w-]+$`),
    );
    expect(location.searchParams.get('openid.realm')).toBe(`${t.baseUrl}/`);
    expect(res.headers.location).not.toContain('evil');
  });

  it('ignores return targets added to the callback and to resume', async () => {
    t = await createTestApp();
    const start = await t.agent
      .get('/oauth/authorize')
      .query({ ...codeQuery, opIdentifier: t.provider.identifier });
    const toProvider = await t.agent.get(pathOf(start.headers.location!));
    const callback = new URL(await signInAtProvider(toProvider.headers.location!, 'alice'));
    callback.searchParams.set('return_to', 'https://evil.example/');
    callback.searchParams.set('next', 'https://evil.example/');
    const res = await t.agent.get(pathOf(callback.href));
    expect([303, 400]).toContain(res.status);
    // Only ever on to the library's own resume route, whatever the callback carried.
    if (res.status === 303) expect(res.headers.location).toBe(`${t.baseUrl}/oauth/authorize/resume`);
    else expect(res.headers.location).toBeUndefined();
    const resume = await supertest(t.baseUrl).get('/oauth/authorize/resume?next=https://evil.example/');
    expect(resume.status).toBe(400);
    expect(resume.headers.location).toBeUndefined();
  });

  it('offers only its own resume URL after a failed login', async () => {
    t = await createTestApp({ login: { strategy: new FailingStrategy() } });
    await t.agent.get('/oauth/authorize').query(codeQuery);
    const res = await t.agent
      .get('/oauth/login/callback')
      .query({ message: 'No.', return_to: 'https://evil.example/' });
    expect(res.status).toBe(400);
    const links = [...res.text.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
    expect(links).toEqual([`${t.baseUrl}/oauth/authorize/resume`]);
  });
});
