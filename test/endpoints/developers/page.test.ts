/**
 * The developer page (issue 40): a member creates an application, gets its secret once, uses it in
 * a code flow, rotates the secret with and without an overlap, and deletes it; a stale sign-in is
 * sent to the provider before a secret is made.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../../src/index.js';
import { createTestApp, redirectParams, type TestApp } from '../../support/app.js';
import { recordEvents, storageEngines } from '../../support/endpoints.js';
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
  type Browser,
} from '../../support/developers.js';
import { hashSecret } from '../../../src/crypto/secrets.js';

let t: TestApp;
afterEach(() => t?.close());

const SCOPES = { realms: 'See your realms', profile: 'See your profile' };

/** A test app with the developer page mounted, its clock moved by `skew.ms`. */
async function developerApp(options: Parameters<typeof createTestApp>[0] = {}, skew = { ms: 0 }) {
  t = await createTestApp({ scopes: SCOPES, clock: () => Date.now() + skew.ms, ...options });
  mountDeveloperPage(t);
  return t;
}

/** The code flow of a member's application at `redirectUri`, up to the token response. */
async function codeFlow(
  t: TestApp,
  credentials: { clientId: string; clientSecret: string },
  redirectUri = WEB_APP.redirect_uri as string,
  browser: Browser = t.agent,
) {
  const start = await browser.get('/oauth/authorize').query({
    response_type: 'code',
    client_id: credentials.clientId,
    redirect_uri: redirectUri,
    scope: 'realms',
    state: 'member-app',
  });
  expect(start.status).toBe(200);
  expect(start.text).toContain('Made by');
  const decided = await answerConsent({ ...t, agent: browser }, start.text, 'allow');
  expect(decided.status).toBe(303);
  const { code } = redirectParams(decided.headers.location!);
  return browser
    .post('/oauth/token')
    .type('form')
    .set('Authorization', basicAuth(credentials.clientId, credentials.clientSecret))
    .send({ grant_type: 'authorization_code', code: code!, redirect_uri: redirectUri });
}

/** A new member's way to the consent page of `clientId`: the selection page, the provider, back. */
async function consentPageFor(t: TestApp, browser: Browser, user: string, clientId: string) {
  const start = await browser.get('/oauth/authorize').query({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: WEB_APP.redirect_uri,
    scope: 'realms',
    state: 's',
  });
  const href = /<a href="([^"]+)">/.exec(start.text)![1]!.replaceAll('&amp;', '&');
  const toProvider = await browser.get(pathOf(href));
  return deliverCallback(browser, pathOf(await signInAtProvider(toProvider.headers.location!, user)));
}

function tokenWithSecret(t: TestApp, clientId: string, secret: string, refreshToken: string) {
  return t.agent
    .post('/oauth/token')
    .type('form')
    .set('Authorization', basicAuth(clientId, secret))
    .send({ grant_type: 'refresh_token', refresh_token: refreshToken });
}

describe('creating an application', () => {
  it('shows the secret once; a reload shows nothing and makes nothing; the code flow works with it', async () => {
    await developerApp();
    const events = recordEvents(t);
    await signInAsMember(t, 'alice');
    const { res, body, form } = await createApp(t);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const { clientId, clientSecret } = credentialsOf(res.text);
    expect(clientSecret).toMatch(/^[\w-]{40,}$/);
    const stored = await t.storage.clients.find(clientId);
    expect(stored).toMatchObject({
      applicationName: 'Realm Stats',
      grantType: 'authorization_code',
      redirectUri: 'https://stats.example/callback',
      scopes: ['realms'],
      secretHash: hashSecret(clientSecret!),
      disabled: false,
    });
    expect(stored!.ownerId).toBeTruthy();

    // The browser's reload sends the same form again: nothing is made, no secret shown.
    const again = await postForm(t, t.agent, form.action, body);
    expect(again.status).toBe(409);
    expect(again.text).toContain('This form was already sent');
    expect(again.text).not.toContain(clientSecret);
    expect((await t.storage.clients.list!()).filter((c) => c.ownerId === stored!.ownerId)).toHaveLength(1);
    // The application's page never shows it again.
    const page = await t.agent.get('/developers/app').query({ client_id: clientId });
    expect(page.status).toBe(200);
    expect(credentialsOf(page.text).clientSecret).toBeUndefined();
    expect(page.text).not.toContain(clientSecret);

    const tokens = await codeFlow(t, { clientId, clientSecret: clientSecret! });
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', scope: 'realms' });

    const created = events.filter((e) => e.type === 'app.created');
    expect(created).toEqual([
      expect.objectContaining({
        clientId,
        ownerId: stored!.ownerId,
        confidential: true,
        awaitingApproval: false,
      }),
    ]);
    expect(JSON.stringify(events)).not.toContain(clientSecret);
  });

  it('lists the applications with their reach, and the consent page names the maker, unverified', async () => {
    await developerApp();
    await signInAsMember(t, 'alice');
    const { res } = await createApp(t, {
      ...WEB_APP,
      description: 'Charts of your realms',
      homepage: 'https://stats.example/',
    });
    const credentials = credentialsOf(res.text) as { clientId: string; clientSecret: string };
    const consent = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: credentials.clientId,
      redirect_uri: WEB_APP.redirect_uri,
      scope: 'realms',
      state: 's',
    });
    expect(consent.text).toMatch(
      /Made by <strong><bdi>[^<]*\/user\/alice<\/bdi><\/strong>, a member of this site/,
    );
    expect(consent.text).toContain('The operator has not verified it');
    expect(consent.text).toContain('Charts of your realms');
    expect(consent.text).toContain('href="https://stats.example/"');
    expect((await answerConsent(t, consent.text, 'allow')).status).toBe(303);

    const list = await t.agent.get('/developers');
    expect(list.text).toContain('Realm Stats');
    expect(list.text).toContain('1 member authorized it (at most 100 until the operator verifies it)');
    expect(list.text).toMatch(/last authorized \d{4}-\d\d-\d\d/);

    await t.storage.clients.update!(credentials.clientId, { verified: true });
    const consented = await consentPageFor(t, newBrowser(t), 'bob', credentials.clientId);
    expect(consented.text).toContain('The operator has verified it.');
  });

  it('refuses the 11th application, and says why on the page', async () => {
    await developerApp({ developerApps: { maxCreatedPerHour: 50 } });
    await signInAsMember(t, 'alice');
    for (let i = 1; i <= 10; i++) {
      const { res } = await createApp(t, { ...WEB_APP, name: `App ${i}`, client_type: 'public' });
      expect(res.status, `app ${i}`).toBe(200);
    }
    const list = await t.agent.get('/developers');
    expect(list.text).toContain('You have 10 applications, as many as a member may');
    expect(list.text).not.toContain('/developers/new');
    const { res } = await createApp(t, { ...WEB_APP, name: 'App 11', client_type: 'public' });
    expect(res.status).toBe(403);
    expect(res.text).toContain('You have 10 applications');
    expect((await t.storage.clients.list!()).filter((c) => c.applicationName === 'App 11')).toEqual([]);
  });

  it('sends a stale sign-in to the provider before a secret is made, then shows the form again filled in', async () => {
    const skew = { ms: 0 };
    await developerApp({}, skew);
    await signInAsMember(t, 'alice');
    skew.ms = 6 * 60_000; // the sign-in is 6 minutes old; 5 is the default
    const { res } = await createApp(t, { ...WEB_APP, name: 'Needs a fresh sign-in' });
    expect(res.status).toBe(303);
    const login = res.headers.location!;
    expect(login).toContain('/oauth/login?openid_identifier=');
    expect(login).toContain('for=developers');
    expect(await t.storage.clients.list!()).toHaveLength(2); // only the test app's two clients
    skew.ms = 0; // the provider's answer is checked against the server's clock

    const toProvider = await t.agent.get(pathOf(login));
    expect(toProvider.status).toBe(302);
    const back = await deliverCallback(
      t.agent,
      pathOf(await signInAtProvider(toProvider.headers.location!, 'alice')),
    );
    expect(back.status).toBe(303);
    expect(back.headers.location).toBe(`${t.baseUrl}/developers/new`);
    const form = await t.agent.get('/developers/new');
    expect(form.text).toContain('You signed in again');
    expect(form.text).toContain('value="Needs a fresh sign-in"');
    const sent = await postForm(
      t,
      t.agent,
      formEndingWith(form.text, '/developers/new').action,
      formBody(formEndingWith(form.text, '/developers/new'), { ...WEB_APP, name: 'Needs a fresh sign-in' }),
    );
    expect(sent.status).toBe(200);
    expect(credentialsOf(sent.text).clientSecret).toBeDefined();
  });

  it('makes a public application without a recent sign-in: there is no secret to protect', async () => {
    const skew = { ms: 0 };
    await developerApp({}, skew);
    await signInAsMember(t, 'alice');
    skew.ms = 6 * 60_000;
    const { res } = await createApp(t, {
      name: 'Realm CLI',
      kind: 'native',
      client_type: 'public',
      redirect_uri: 'http://127.0.0.1/callback',
      scopes: ['realms'],
    });
    expect(res.status).toBe(200);
    const { clientId, clientSecret } = credentialsOf(res.text);
    expect(clientSecret).toBeUndefined();
    expect(await t.storage.clients.find(clientId)).toMatchObject({
      secretHash: null,
      redirectUri: 'http://127.0.0.1/callback',
    });
  });
});

describe('rotating a secret', () => {
  async function appWithTokens() {
    const skew = { ms: 0 };
    await developerApp({}, skew);
    await signInAsMember(t, 'alice');
    const { res } = await createApp(t);
    const credentials = credentialsOf(res.text) as { clientId: string; clientSecret: string };
    const tokens = await codeFlow(t, credentials);
    expect(tokens.status).toBe(200);
    return { skew, credentials, refreshToken: (tokens.body as { refresh_token: string }).refresh_token };
  }

  async function rotate(clientId: string, overlap: string) {
    const page = await t.agent.get('/developers/app').query({ client_id: clientId });
    const form = formEndingWith(page.text, '/developers/app/rotate');
    return postForm(t, t.agent, form.action, formBody(form, { overlap }));
  }

  it('without an overlap: the old secret stops at once, the new one works', async () => {
    const { credentials, refreshToken } = await appWithTokens();
    const events = recordEvents(t);
    const rotated = await rotate(credentials.clientId, '0');
    expect(rotated.status).toBe(200);
    const { clientSecret: fresh } = credentialsOf(rotated.text);
    expect(fresh).toBeDefined();
    expect(fresh).not.toBe(credentials.clientSecret);
    const old = await tokenWithSecret(t, credentials.clientId, credentials.clientSecret, refreshToken);
    expect(old.status).toBe(401);
    expect(old.body).toMatchObject({ error: 'invalid_client' });
    expect((await tokenWithSecret(t, credentials.clientId, fresh!, refreshToken)).status).toBe(200);
    expect(events.filter((e) => e.type === 'app.secret_rotated')).toEqual([
      expect.not.objectContaining({ previousValidUntil: expect.anything() }),
    ]);
    expect(JSON.stringify(events)).not.toContain(fresh);
  });

  it('with an overlap: both work until it ends, then only the new one', async () => {
    const { skew, credentials, refreshToken } = await appWithTokens();
    const rotated = await rotate(credentials.clientId, '60');
    const { clientSecret: fresh } = credentialsOf(rotated.text);
    expect(rotated.text).toContain('The previous secret works until');
    const first = await tokenWithSecret(t, credentials.clientId, credentials.clientSecret, refreshToken);
    expect(first.status).toBe(200);
    const next = (first.body as { refresh_token: string }).refresh_token;
    skew.ms = 61 * 60_000;
    expect((await tokenWithSecret(t, credentials.clientId, credentials.clientSecret, next)).status).toBe(401);
    expect((await tokenWithSecret(t, credentials.clientId, fresh!, next)).status).toBe(200);
  });

  it("refuses an overlap beyond the operator's bound", async () => {
    await developerApp({ developerApps: { maxSecretOverlapMinutes: 30 } });
    await signInAsMember(t, 'alice');
    const { clientId } = credentialsOf((await createApp(t)).res.text);
    const page = await t.agent.get('/developers/app').query({ client_id: clientId });
    expect(page.text).toContain('<option value="30">');
    expect(page.text).not.toContain('<option value="60">');
    const form = formEndingWith(page.text, '/developers/app/rotate');
    const refused = await postForm(t, t.agent, form.action, formBody(form, { overlap: '60' }));
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('at most 30 minutes');
  });
});

describe('deleting an application', () => {
  it('ends the next refresh (invalid_client) and the next bearer request (401)', async () => {
    await developerApp();
    const events: ServerEvent[] = recordEvents(t);
    await signInAsMember(t, 'alice');
    const credentials = credentialsOf((await createApp(t)).res.text) as {
      clientId: string;
      clientSecret: string;
    };
    const tokens = (await codeFlow(t, credentials)).body as { access_token: string; refresh_token: string };
    const realms = () => t.agent.get('/v1/realms').set('Authorization', `Bearer ${tokens.access_token}`);
    expect((await realms()).status).toBe(200);

    const page = await t.agent.get('/developers/app').query({ client_id: credentials.clientId });
    const form = formEndingWith(page.text, '/developers/app/delete');
    const unconfirmed = await postForm(t, t.agent, form.action, formBody(form, {}));
    expect(unconfirmed.status).toBe(400);
    expect((await realms()).status).toBe(200);
    const deleted = await postForm(t, t.agent, form.action, formBody(form, { confirm: 'yes' }));
    expect(deleted.status).toBe(303);
    expect(deleted.headers.location).toBe(`${t.baseUrl}/developers`);
    expect((await t.agent.get('/developers')).text).toContain('Realm Stats was deleted.');

    expect((await realms()).status).toBe(401);
    const refresh = await tokenWithSecret(
      t,
      credentials.clientId,
      credentials.clientSecret,
      tokens.refresh_token,
    );
    expect(refresh.status).toBe(401);
    expect(refresh.body).toMatchObject({ error: 'invalid_client' });
    expect(await t.storage.clients.find(credentials.clientId)).toBeNull();
    expect(events.filter((e) => e.type === 'app.deleted')).toEqual([
      expect.objectContaining({ clientId: credentials.clientId }),
    ]);
  });
});

const engines = (await storageEngines()).filter((engine) => engine.name !== 'memory');

describe.each(engines)('the developer page on $name storage', ({ skip, open }) => {
  const suffix = skip === null ? '' : ` (${skip})`;
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await dispose?.();
    dispose = undefined;
  });

  it.skipIf(skip !== null)(
    `creates, rotates with an overlap, lists and deletes an application a member uses${suffix}`,
    async () => {
      const opened = await open();
      dispose = opened.dispose;
      const skew = { ms: 0 };
      await developerApp({ storage: opened.storage }, skew);
      await signInAsMember(t, 'alice');
      const { res } = await createApp(t, {
        ...WEB_APP,
        description: 'Charts',
        homepage: 'https://stats.example/',
      });
      const credentials = credentialsOf(res.text) as { clientId: string; clientSecret: string };
      expect(await t.storage.clients.find(credentials.clientId)).toMatchObject({
        description: 'Charts',
        homepageUri: 'https://stats.example/',
        verified: false,
        awaitingApproval: false,
      });
      const tokens = await codeFlow(t, credentials);
      expect(tokens.status).toBe(200);
      const { refresh_token } = tokens.body as { refresh_token: string };

      const page = await t.agent.get('/developers/app').query({ client_id: credentials.clientId });
      const form = formEndingWith(page.text, '/developers/app/rotate');
      const rotated = await postForm(t, t.agent, form.action, formBody(form, { overlap: '60' }));
      const { clientSecret: fresh } = credentialsOf(rotated.text);
      expect(
        (await tokenWithSecret(t, credentials.clientId, credentials.clientSecret, refresh_token)).status,
      ).toBe(200);
      skew.ms = 61 * 60_000;
      expect(
        (await tokenWithSecret(t, credentials.clientId, credentials.clientSecret, refresh_token)).status,
      ).toBe(401);
      skew.ms = 0;
      expect((await t.agent.get('/developers')).text).toContain('1 member authorized it');

      const again = await t.agent.get('/developers/app').query({ client_id: credentials.clientId });
      const remove = formEndingWith(again.text, '/developers/app/delete');
      expect((await postForm(t, t.agent, remove.action, formBody(remove, { confirm: 'yes' }))).status).toBe(
        303,
      );
      expect((await tokenWithSecret(t, credentials.clientId, fresh!, refresh_token)).status).toBe(401);
      expect(await t.storage.clients.find(credentials.clientId)).toBeNull();
    },
  );
});
