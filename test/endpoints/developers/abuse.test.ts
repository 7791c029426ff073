/**
 * The developer page against hostile input and abuse (issue 40): every form field, CSRF and
 * cross-site posts, id guessing between members, the rate of creation, suspension, approval and
 * the reach cap of unverified applications. No answer is a 500; nothing refused is stored.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { approveClient, setClientVerified, suspendClientsOf } from '../../../src/clients/operator.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { recordEvents } from '../../support/endpoints.js';
import { answerConsent, basicAuth, deliverCallback, pathOf, signInAtProvider } from '../../support/flow.js';
import {
  WEB_APP,
  createApp,
  credentialsOf,
  formBody,
  formEndingWith,
  mountDeveloperPage,
  newBrowser,
  postForm,
  signInAsMember,
  type AppFields,
  type Browser,
} from '../../support/developers.js';

let t: TestApp;
afterEach(() => t?.close());

const SCOPES = { realms: 'See your realms', profile: 'See your profile' };

async function developerApp(options: Parameters<typeof createTestApp>[0] = {}) {
  t = await createTestApp({ scopes: SCOPES, ...options });
  mountDeveloperPage(t);
  return t;
}

/** The members' applications stored: none may come from a refused form. */
async function memberApps() {
  return (await t.storage.clients.list!()).filter((client) => client.ownerId != null);
}

describe('hostile form fields', () => {
  const refusals: [string, AppFields, RegExp][] = [
    ['an empty name', { ...WEB_APP, name: '   ' }, /The name must have 1 to 100 characters/],
    ['a name of 101 characters', { ...WEB_APP, name: 'x'.repeat(101) }, /1 to 100 characters/],
    [
      'a right-to-left override in the name',
      { ...WEB_APP, name: 'Stats\u202Egpj.exe' },
      /no control or invisible characters/,
    ],
    [
      'a zero-width space in the name',
      { ...WEB_APP, name: 'Pay\u200Bpal' },
      /no control or invisible characters/,
    ],
    ['a javascript: redirect URI', { ...WEB_APP, redirect_uri: 'javascript:alert(1)' }, /https/],
    ['an http redirect URI off loopback', { ...WEB_APP, redirect_uri: 'http://stats.example/cb' }, /https/],
    [
      'a redirect URI with a fragment',
      { ...WEB_APP, redirect_uri: 'https://stats.example/cb#x' },
      /fragment/i,
    ],
    [
      'a redirect URI with a wildcard',
      { ...WEB_APP, redirect_uri: 'https://*.stats.example/cb' },
      /redirect/i,
    ],
    [
      'a redirect URI with credentials',
      { ...WEB_APP, redirect_uri: 'https://u:p@stats.example/cb' },
      /redirect/i,
    ],
    ['no redirect URI for a web app', { ...WEB_APP, redirect_uri: '' }, /https URL/],
    ['a private-use scheme for a web app', { ...WEB_APP, redirect_uri: 'com.example.app:/cb' }, /https URL/],
    [
      'a javascript: home page',
      { ...WEB_APP, homepage: 'javascript:alert(1)' },
      /home page must be an https URL/,
    ],
    [
      'an http home page',
      { ...WEB_APP, homepage: 'http://stats.example/' },
      /home page must be an https URL/,
    ],
    ['a home page with credentials', { ...WEB_APP, homepage: 'https://u:p@stats.example/' }, /no user name/],
    ['a control character in the description', { ...WEB_APP, description: 'line\u0007bell' }, /description/],
    ['a description of 301 characters', { ...WEB_APP, description: 'd'.repeat(301) }, /at most 300/],
    [
      'a scope not offered to members',
      { ...WEB_APP, scopes: ['realms', 'admin'] },
      /scope admin is not offered/,
    ],
    ['no scope', { ...WEB_APP, scopes: [] }, /at least one scope/],
    ['a team the member is not in', { ...WEB_APP, teams: ['admins'] }, /not a member of ~admins/],
    [
      'a confidential native app',
      { ...WEB_APP, kind: 'native', redirect_uri: 'http://127.0.0.1/cb' },
      /cannot keep a secret/,
    ],
    [
      'a native app with an https redirect',
      { ...WEB_APP, kind: 'native', client_type: 'public' },
      /loopback/,
    ],
    [
      'a post-logout URI over http',
      { ...WEB_APP, post_logout_redirect_uris: 'http://evil.example/bye' },
      /A post-logout redirect URI/,
    ],
  ];

  it.each(refusals)(
    'refuses %s with the form again, saying why, and stores nothing',
    async (_, fields, reason) => {
      await developerApp();
      await signInAsMember(t);
      const { res } = await createApp(t, fields);
      expect(res.status).toBe(400);
      expect(res.text).toContain('Create an application');
      expect(res.text, res.text.match(/role="alert"[^<]*</)?.[0]).toMatch(reason);
      expect(res.text).toContain('role="alert"');
      expect(await memberApps()).toEqual([]);
    },
  );

  it('shows a name, description and home page as text on every page, never as markup', async () => {
    await developerApp();
    await signInAsMember(t);
    const hostile = '<img src=x onerror=alert(1)>';
    const { res } = await createApp(t, {
      ...WEB_APP,
      name: hostile,
      description: `"><script>alert(2)</script>`,
      homepage: 'https://stats.example/"onmouseover="alert(3)',
    });
    expect(res.status).toBe(200);
    const { clientId } = credentialsOf(res.text);
    for (const html of [
      res.text,
      (await t.agent.get('/developers')).text,
      (await t.agent.get('/developers/app').query({ client_id: clientId })).text,
      (
        await t.agent.get('/oauth/authorize').query({
          response_type: 'code',
          client_id: clientId,
          redirect_uri: WEB_APP.redirect_uri,
          scope: 'realms',
          state: 's',
        })
      ).text,
    ]) {
      expect(html).not.toContain('<img src=x');
      expect(html).not.toContain('<script>alert');
      expect(html).not.toContain('"onmouseover=');
    }
  });

  it('answers a repeated field, an oversized body and too many fields with a page, never a 500', async () => {
    await developerApp();
    await signInAsMember(t);
    const page = await t.agent.get('/developers/new');
    const form = formEndingWith(page.text, '/developers/new');
    const body = new URLSearchParams(formBody(form, WEB_APP));
    const origin = new URL(t.baseUrl).origin;
    const send = (text: string) =>
      t.agent.post('/developers/new').type('form').set('Origin', origin).send(text);

    const repeated = await send(`${body}&name=Second`);
    expect(repeated.status).toBe(400);
    expect(repeated.text).toContain('must be given once');
    const oversized = await send(`${body}&description=${'d'.repeat(9000)}`);
    expect(oversized.status).toBe(413);
    const many = await send(`${body}&${Array.from({ length: 50 }, (_, i) => `f${i}=1`).join('&')}`);
    expect([400, 413]).toContain(many.status);
    for (const res of [repeated, oversized, many]) {
      expect(res.type).toBe('text/html');
      expect(res.text).not.toMatch(/at \w+ \(|node_modules/);
    }
    expect(await memberApps()).toEqual([]);
  });
});

describe('CSRF and cross-site posts', () => {
  it("refuses a form without this session's CSRF token, from another site, or from someone signed out", async () => {
    await developerApp();
    await signInAsMember(t);
    const page = await t.agent.get('/developers/new');
    const form = formEndingWith(page.text, '/developers/new');
    const good = formBody(form, WEB_APP);

    const noCsrf = await postForm(t, t.agent, form.action, { ...good, csrf: '' });
    expect(noCsrf.status).toBe(400);
    expect(noCsrf.text).toContain('This page has expired');
    const wrongCsrf = await postForm(t, t.agent, form.action, { ...good, csrf: 'x'.repeat(43) });
    expect(wrongCsrf.status).toBe(400);
    const crossSite = await t.agent
      .post('/developers/new')
      .type('form')
      .set('Sec-Fetch-Site', 'cross-site')
      .send(good);
    expect(crossSite.status).toBe(403);
    const otherOrigin = await t.agent
      .post('/developers/new')
      .type('form')
      .set('Origin', 'https://evil.example')
      .send(good);
    expect(otherOrigin.status).toBe(403);
    // Another browser (signed out) replaying the form with its tokens.
    const stranger = await postForm(t, newBrowser(t), form.action, good);
    expect(stranger.status).toBe(400);
    expect(await memberApps()).toEqual([]);
    // The form itself still works in the member's browser.
    expect((await postForm(t, t.agent, form.action, good)).status).toBe(200);
  });
});

describe("another member's applications", () => {
  it('are neither shown nor changed nor deleted by guessing their id: the same 404 as an unknown id', async () => {
    await developerApp();
    await signInAsMember(t, 'alice');
    const { clientId, clientSecret } = credentialsOf((await createApp(t)).res.text);
    const before = await t.storage.clients.find(clientId);

    const bob: Browser = newBrowser(t);
    await signInAsMember(t, 'bob', bob);
    const { clientId: bobsApp } = credentialsOf(
      (await createApp(t, { ...WEB_APP, name: "Bob's" }, bob)).res.text,
    );
    const bobsPage = await bob.get('/developers/app').query({ client_id: bobsApp });
    expect(bobsPage.status).toBe(200);
    expect((await bob.get('/developers')).text).not.toContain('Realm Stats');

    for (const id of [clientId, 'code-client', '00000000-0000-0000-0000-000000000000']) {
      const seen = await bob.get('/developers/app').query({ client_id: id });
      expect(seen.status).toBe(404);
      expect(seen.text).toContain('You have no application with this id.');
      expect(seen.text).not.toContain('Realm Stats');
      for (const suffix of ['update', 'rotate', 'delete']) {
        const form = formEndingWith(bobsPage.text, `/developers/app/${suffix}`);
        const body = formBody(form, { ...WEB_APP, name: 'Taken over', overlap: '0', confirm: 'yes' });
        const res = await postForm(t, bob, form.action, { ...body, client_id: id });
        expect(res.status, `${suffix} of ${id}`).toBe(404);
      }
    }
    expect(await t.storage.clients.find(clientId)).toEqual(before);
    expect(await t.storage.clients.find('code-client')).not.toBeNull();
    // Alice's secret still works: nothing rotated it.
    expect(before!.secretHash).toBeTruthy();
    expect(clientSecret).toBeTruthy();
    // Two client_id parameters name nothing.
    const twice = await bob.get(`/developers/app?client_id=${bobsApp}&client_id=${bobsApp}`);
    expect(twice.status).toBe(404);
  });
});

describe('limits', () => {
  it('refuses a sixth application created within the hour (429, Retry-After), deleted ones counted', async () => {
    await developerApp();
    await signInAsMember(t);
    for (let i = 1; i <= 5; i++) {
      const { res } = await createApp(t, { ...WEB_APP, name: `App ${i}`, client_type: 'public' });
      expect(res.status, `app ${i}`).toBe(200);
      if (i === 5) {
        const { clientId } = credentialsOf(res.text);
        const page = await t.agent.get('/developers/app').query({ client_id: clientId });
        const form = formEndingWith(page.text, '/developers/app/delete');
        expect((await postForm(t, t.agent, form.action, formBody(form, { confirm: 'yes' }))).status).toBe(
          303,
        );
      }
    }
    const events = recordEvents(t);
    const { res } = await createApp(t, { ...WEB_APP, name: 'App 6', client_type: 'public' });
    expect(res.status).toBe(429);
    // Counted with every other limit (the Prometheus figures and the audit trail read the event).
    expect(events.filter((e) => e.type === 'rate_limit.exceeded')).toEqual([
      expect.objectContaining({ limit: 'app_creation', per: 'account' }),
    ]);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.text).toContain('in the last hour');
    expect(await memberApps()).toHaveLength(4);
  });

  it("a suspended member's applications stop at once, and they cannot create another", async () => {
    await developerApp();
    await signInAsMember(t, 'alice');
    const credentials = credentialsOf((await createApp(t)).res.text) as {
      clientId: string;
      clientSecret: string;
    };
    const start = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: credentials.clientId,
      redirect_uri: WEB_APP.redirect_uri,
      scope: 'realms',
      state: 's',
    });
    const decided = await answerConsent(t, start.text, 'allow');
    const code = new URL(decided.headers.location!).searchParams.get('code')!;
    const tokens = await t.agent
      .post('/oauth/token')
      .type('form')
      .set('Authorization', basicAuth(credentials.clientId, credentials.clientSecret))
      .send({ grant_type: 'authorization_code', code, redirect_uri: WEB_APP.redirect_uri });
    const { access_token, refresh_token } = tokens.body as { access_token: string; refresh_token: string };
    const realms = () => t.agent.get('/v1/realms').set('Authorization', `Bearer ${access_token}`);
    expect((await realms()).status).toBe(200);

    // The rotation form, as the page showed it before the suspension.
    const before = await t.agent.get('/developers/app').query({ client_id: credentials.clientId });
    const rotate = formEndingWith(before.text, '/developers/app/rotate');
    // The operator suspends the member: every application of theirs is disabled.
    const [app] = await memberApps();
    expect((await suspendClientsOf(t.storage, app!.ownerId!)).suspended).toEqual([credentials.clientId]);

    expect((await realms()).status).toBe(401);
    const refresh = await t.agent
      .post('/oauth/token')
      .type('form')
      .set('Authorization', basicAuth(credentials.clientId, credentials.clientSecret))
      .send({ grant_type: 'refresh_token', refresh_token });
    expect(refresh.body).toMatchObject({ error: 'invalid_client' });
    const list = await t.agent.get('/developers');
    expect(list.text).toContain('Suspended by the operator');
    expect(list.text).toContain('The operator has suspended your applications');
    const { res } = await createApp(t, { ...WEB_APP, name: 'Another', client_type: 'public' });
    expect(res.status).toBe(403);
    const page = await t.agent.get('/developers/app').query({ client_id: credentials.clientId });
    expect(page.text).toContain('it cannot be changed or deleted');
    expect(page.text).not.toContain('/developers/app/rotate');
    const rotated = await postForm(t, t.agent, rotate.action, formBody(rotate, { overlap: '0' }));
    expect(rotated.status).toBe(403);
    expect(rotated.text).not.toContain('id="client-secret"');
  });

  it('an application waiting for approval can neither authorize nor authenticate until approved', async () => {
    await developerApp({ developerApps: { requireApproval: true } });
    const events = recordEvents(t);
    await signInAsMember(t);
    const { res } = await createApp(t);
    expect(res.text).toContain('once the operator approves it');
    expect(res.text).toContain("Waiting for the operator's approval");
    const credentials = credentialsOf(res.text) as { clientId: string; clientSecret: string };
    expect(events).toContainEqual(expect.objectContaining({ type: 'app.created', awaitingApproval: true }));
    const query = {
      response_type: 'code',
      client_id: credentials.clientId,
      redirect_uri: WEB_APP.redirect_uri,
      scope: 'realms',
      state: 's',
    };
    const waiting = await t.agent.get('/oauth/authorize').query(query);
    expect(waiting.status).toBe(400);
    expect(waiting.text).toContain('waiting for the operator&#39;s approval');
    const token = await t.agent
      .post('/oauth/token')
      .type('form')
      .set('Authorization', basicAuth(credentials.clientId, credentials.clientSecret))
      .send({ grant_type: 'authorization_code', code: 'x', redirect_uri: WEB_APP.redirect_uri });
    expect(token.status).toBe(401);

    await approveClient(t.storage, credentials.clientId); // the operator's `clients approve`
    expect((await t.agent.get('/oauth/authorize').query(query)).status).toBe(200);
  });
});

describe('the reach cap of unverified applications', () => {
  /** `user`, in a browser of their own, asks to authorize `clientId`: the page the authorization ends on. */
  async function authorizeAs(user: string, clientId: string) {
    const browser = newBrowser(t);
    const start = await browser.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: WEB_APP.redirect_uri,
      scope: 'realms',
      state: 'cap',
    });
    const href = /<a href="([^"]+)">/.exec(start.text)![1]!.replaceAll('&amp;', '&');
    const toProvider = await browser.get(pathOf(href));
    const page = await deliverCallback(
      browser,
      pathOf(await signInAtProvider(toProvider.headers.location!, user)),
    );
    return { browser, page };
  }

  it('refuses the member past the cap with a page whose way back carries access_denied, until verified', async () => {
    await developerApp({ developerApps: { unverifiedReach: 2 } });
    const events = recordEvents(t);
    await signInAsMember(t, 'maker');
    const { clientId } = credentialsOf((await createApp(t)).res.text);
    for (const user of ['carol', 'dave']) {
      const { browser, page } = await authorizeAs(user, clientId);
      expect(page.status).toBe(200);
      expect((await answerConsent({ ...t, agent: browser }, page.text, 'allow')).status).toBe(303);
    }
    const { page: refused } = await authorizeAs('erin', clientId);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('not yet verified');
    const back = /<a href="([^"]+)">Return to the application<\/a>/
      .exec(refused.text)?.[1]
      ?.replaceAll('&amp;', '&');
    expect(back).toBeDefined();
    const backUrl = new URL(back!);
    expect(backUrl.origin + backUrl.pathname).toBe(WEB_APP.redirect_uri);
    expect(backUrl.searchParams.get('error')).toBe('access_denied');
    expect(backUrl.searchParams.get('state')).toBe('cap');
    expect(events).toContainEqual(expect.objectContaining({ type: 'app.reach_capped', clientId, reach: 2 }));
    // Someone who trusts it already stays within the cap.
    const { page: carolAgain } = await authorizeAs('carol', clientId);
    expect(carolAgain.status).toBe(302);
    expect(new URL(carolAgain.headers.location!).searchParams.get('code')).toBeTruthy();

    // The operator's `clients verify` (src/cli/member-apps.ts) lifts the cap.
    await setClientVerified(t.storage, clientId, true);
    const { page: verified } = await authorizeAs('erin', clientId);
    expect(verified.status).toBe(200);
    expect(verified.text).toContain('The operator has verified it.');
  });
});
