/**
 * Signing out: a POST with the session's CSRF token from our own origin ends the login session
 * (a new session id); from the consent page it keeps the authorization in progress and resumes
 * it at the provider selection, to sign in with another account.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/index.js';
import { ephemeralKeys } from '../../src/storage/keys.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { authorizeWithLogin, obtainCode, parseForms, pathOf } from '../support/flow.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const sidOf = (setCookie: string[] | undefined) =>
  decodeURIComponent(/openid_oauth_bridge\.sid=s%3A([^.;]+)/.exec((setCookie ?? []).join(';'))?.[1] ?? '');

describe('signing out', () => {
  it('the consent page says who is signed in and offers another account; the request resumes', async () => {
    t = await createTestApp();
    const query = {
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      state: 's',
    };
    const consent = await authorizeWithLogin(t, query, 'alice');
    expect(consent.status).toBe(200);
    expect(consent.text).toContain(`Signed in as ${t.provider.userUrl('alice')}`);
    const [decision, switchAccount] = parseForms(consent.text);
    expect(decision!.fields.decision ?? decision!.action).toBeTruthy();
    expect(switchAccount!.action).toBe(`${t.baseUrl}/oauth/logout`);

    const out = await t.agent
      .post(pathOf(switchAccount!.action))
      .type('form')
      .set('Origin', t.baseUrl)
      .send(switchAccount!.fields);
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe(`${t.baseUrl}/oauth/authorize/resume`);
    // The request in progress resumes at the selection page: signed out, nothing else lost.
    const resumed = await t.agent.get('/oauth/authorize/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.text).toContain('Development provider');
    expect(resumed.text).not.toContain('Signed in as');
    // The old consent form no longer works: its session is gone.
    const stale = await t.agent
      .post('/oauth/authorize/decision')
      .type('form')
      .set('Origin', t.baseUrl)
      .send({ ...decision!.fields, decision: 'allow' });
    expect(stale.status).toBe(400);
    expect(stale.headers.location).toBeUndefined();
  });

  it('the applications page signs out: the session is destroyed in the store', async () => {
    const storage = memoryStorage();
    t = await createTestApp({ storage });
    await obtainCode(t);
    const page = await t.agent.get('/oauth/applications');
    expect(page.status).toBe(200);
    const signOut = parseForms(page.text).find((form) => form.action.endsWith('/oauth/logout'))!;
    expect(signOut).toBeDefined();
    const cookies = await t.agent.jar.getCookies({
      domain: '127.0.0.1',
      path: '/',
      secure: false,
      script: false,
    });
    const sid = sidOf(cookies.map((c) => `${c.name}=${c.value}`));
    expect(await storage.ephemeral.get(ephemeralKeys.session(sid), Date.now())).not.toBeNull();

    const out = await t.agent
      .post('/oauth/logout')
      .type('form')
      .set('Origin', t.baseUrl)
      .send(signOut.fields);
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe(`${t.baseUrl}/oauth/applications`);
    expect(await storage.ephemeral.get(ephemeralKeys.session(sid), Date.now())).toBeNull();
    const after = await t.agent.get('/oauth/applications');
    expect(after.text).toContain('Sign in to continue');
  });

  it('refuses a sign-out without the session token or from another site, and stays signed in', async () => {
    t = await createTestApp();
    await obtainCode(t);
    const page = await t.agent.get('/oauth/applications');
    const signOut = parseForms(page.text).find((form) => form.action.endsWith('/oauth/logout'))!;
    const wrong = await t.agent
      .post('/oauth/logout')
      .type('form')
      .set('Origin', t.baseUrl)
      .send({ ...signOut.fields, csrf: 'forged' });
    expect(wrong.status).toBe(400);
    const crossSite = await t.agent
      .post('/oauth/logout')
      .type('form')
      .set('Sec-Fetch-Site', 'cross-site')
      .send(signOut.fields);
    expect(crossSite.status).toBe(403);
    expect((await t.agent.get('/oauth/applications')).text).toContain('Signed in as');
  });
});
