/**
 * The end user's authorized-applications page: list, revoke, and what revoking does at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  authorizedApplications,
  memoryStorage,
  registerClient,
  revokeApplication,
  StorageUnavailableError,
} from '../../../src/index.js';
import { createTestApp, CODE_REDIRECT, type TestApp } from '../../support/app.js';
import { recordEvents } from '../../support/endpoints.js';
import {
  answerConsent,
  exchangeCode,
  obtainCode,
  parseForm,
  pathOf,
  signInAtProvider,
} from '../../support/flow.js';
import { seedGrant, storedToken, tokenWorks } from '../../support/grants.js';

let t: TestApp;
afterEach(() => t?.close());

const realms = (token: string) => t.agent.get('/v1/realms').set('Authorization', `Bearer ${token}`);

/** The revoke form of the application named `name` on the page. */
function revokeForm(page: string, name: string) {
  const item = page.split('<li>').find((part) => part.includes(`<h2>${name}</h2>`));
  expect(item, `${name} is listed`).toBeDefined();
  return parseForm(item!);
}

describe('GET /oauth/applications', () => {
  it('asks a visitor who is not signed in to choose a provider, then shows their applications', async () => {
    t = await createTestApp();
    const page = await t.agent.get('/oauth/applications');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Sign in to continue to your authorized applications');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['x-frame-options']).toBe('DENY');

    const href = /<a href="([^"]+)">/.exec(page.text)![1]!.replaceAll('&amp;', '&');
    const toProvider = await t.agent.get(pathOf(href));
    expect(toProvider.status).toBe(302);
    const callback = await t.agent.get(pathOf(await signInAtProvider(toProvider.headers.location!, 'carol')));
    expect(callback.status).toBe(303);
    expect(callback.headers.location).toBe(`${t.baseUrl}/oauth/applications`);

    const list = await t.agent.get('/oauth/applications');
    expect(list.text).toContain('Signed in as');
    expect(list.text).toContain('carol');
    expect(list.text).toContain('You have not authorized any application.');
  });

  it('lists the applications the user trusts, with when they were authorized', async () => {
    t = await createTestApp({ scopes: { realms: 'See your realms', profile: 'See your profile' } });
    const { code } = await obtainCode(t, { scope: 'realms' });
    expect((await exchangeCode(t, code)).status).toBe(200);
    const page = await t.agent.get('/oauth/applications');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h2>Photo Printer</h2>');
    expect(page.text).toContain('Can: See your realms');
    expect(page.text).toMatch(/Authorized \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(page.text).not.toContain('Last used');
    expect(page.text).not.toContain('Single Page App'); // Not trusted by this user.
  });

  it('says when the user gave the application more access, and lists every scope it has', async () => {
    let skew = 0;
    t = await createTestApp({
      scopes: { realms: 'See your realms', profile: 'See your profile' },
      clock: () => Date.now() + skew,
    });
    await obtainCode(t, { scope: 'realms' });
    expect((await t.agent.get('/oauth/applications')).text).not.toContain('more access given');
    skew += 600_000;
    const more = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      scope: 'realms profile',
      state: 'more',
    });
    expect(more.status).toBe(200);
    expect((await answerConsent(t, more.text, 'allow')).status).toBe(303);
    const page = await t.agent.get('/oauth/applications');
    expect(page.text).toContain('Can: See your realms, See your profile');
    expect(page.text).toMatch(
      /Authorized \d{4}-\d\d-\d\d \d\d:\d\d UTC · more access given \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
    );
    // Still one grant: the consent was widened, not given twice.
    expect(await t.storage.grants.list({ clientId: t.codeClient.clientId })).toEqual([
      expect.objectContaining({ scopes: ['realms', 'profile'], revokedAt: null }),
    ]);
  });

  it('shows an application name as text, never as markup', async () => {
    t = await createTestApp();
    await registerClient(t.storage, {
      clientId: 'hostile',
      applicationName: '<img src=x onerror=alert(1)>',
      redirectUri: 'https://hostile.example/cb',
    });
    await obtainCode(t);
    const [grant] = await t.storage.grants.list({ clientId: t.codeClient.clientId });
    await seedGrant(t.server, 'hostile', grant!.userId, []);
    const page = await t.agent.get('/oauth/applications');
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page.text).not.toContain('<img');
  });
});

describe('POST /oauth/applications/revoke', () => {
  it('ends the trust and the tokens at once; the next authorization asks again', async () => {
    t = await createTestApp();
    const { code } = await obtainCode(t);
    const tokens = (await exchangeCode(t, code)).body as { access_token: string; refresh_token: string };
    expect((await realms(tokens.access_token)).status).toBe(200);
    const events = recordEvents(t);

    const page = await t.agent.get('/oauth/applications');
    const form = revokeForm(page.text, 'Photo Printer');
    const revoked = await t.agent
      .post(pathOf(form.action))
      .type('form')
      .set('Sec-Fetch-Site', 'same-origin')
      .send(form.fields);
    expect(revoked.status).toBe(303);
    const after = await t.agent.get(pathOf(revoked.headers.location!));
    expect(after.text).toContain('Photo Printer no longer has access to your account.');
    expect(after.text).not.toContain('<h2>Photo Printer</h2>');
    // The notice is shown once: a reload shows the list alone.
    const reload = await t.agent.get('/oauth/applications');
    expect(reload.text).not.toContain('no longer has access');

    expect((await realms(tokens.access_token)).status).toBe(401);
    const refresh = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      redirect_uri: CODE_REDIRECT,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
    });
    expect(refresh.status).toBe(400);
    expect(refresh.body).toMatchObject({ error: 'invalid_grant' });
    const { grant } = (await storedToken(t.server, tokens.access_token))!;
    expect(grant!.revokedAt).toEqual(expect.any(Number));
    expect(events.filter((e) => e.type === 'consent.revoked')).toEqual([
      expect.objectContaining({ clientId: t.codeClient.clientId, grantId: grant!.grantId, by: 'user' }),
    ]);

    const again = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      state: 'again',
    });
    expect(again.status).toBe(200);
    expect(parseForm(again.text).action).toContain('/oauth/authorize/decision');
  });

  it.each([
    ['a wrong CSRF token', { 'Sec-Fetch-Site': 'same-origin' }, { csrf: 'forged' }, 400],
    ['a cross-site post', { 'Sec-Fetch-Site': 'cross-site' }, {}, 403],
    ['a post from another origin', { Origin: 'https://evil.example' }, {}, 403],
  ])('refuses %s and revokes nothing', async (_name, headers, override, status) => {
    t = await createTestApp();
    const { code } = await obtainCode(t);
    const tokens = (await exchangeCode(t, code)).body as { access_token: string };
    const form = revokeForm((await t.agent.get('/oauth/applications')).text, 'Photo Printer');
    const res = await t.agent
      .post(pathOf(form.action))
      .type('form')
      .set(headers)
      .send({ ...form.fields, ...override });
    expect(res.status).toBe(status);
    expect(res.headers.location).toBeUndefined();
    expect((await realms(tokens.access_token)).status).toBe(200);
    const [grant] = await t.storage.grants.list({ clientId: t.codeClient.clientId });
    expect(grant!.revokedAt).toBeNull();
  });

  it('never takes a notice from the URL (issue 18, finding 3)', async () => {
    t = await createTestApp();
    await obtainCode(t);
    for (const revoked of ['code-client', 'Photo Printer', 'anything']) {
      const page = await t.agent.get('/oauth/applications').query({ revoked });
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('no longer has access');
      expect(page.text).toContain('<h2>Photo Printer</h2>');
    }
  });

  it('refuses a post without a session', async () => {
    t = await createTestApp();
    const res = await t.agent
      .post('/oauth/applications/revoke')
      .type('form')
      .send({ client_id: t.codeClient.clientId, csrf: 'x' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('This page has expired.');
  });
});

describe('authorizedApplications and revokeApplication', () => {
  it('give a host the same list and the same revocation for its own page', async () => {
    t = await createTestApp();
    const { code } = await obtainCode(t);
    const tokens = (await exchangeCode(t, code)).body as { access_token: string; refresh_token: string };
    const [grant] = await t.storage.grants.list({ clientId: t.codeClient.clientId });
    const apps = await authorizedApplications(t.server, grant!.userId);
    expect(apps).toEqual([
      expect.objectContaining({
        clientId: t.codeClient.clientId,
        applicationName: 'Photo Printer',
        authorizedAt: grant!.createdAt,
        updatedAt: grant!.updatedAt,
      }),
    ]);
    expect(apps[0]!.updatedAt).toBeGreaterThanOrEqual(apps[0]!.authorizedAt);
    expect(await revokeApplication(t.server, grant!.userId, t.codeClient.clientId)).toBe(true);
    expect(await revokeApplication(t.server, grant!.userId, t.codeClient.clientId)).toBe(false);
    expect(await authorizedApplications(t.server, grant!.userId)).toEqual([]);
    expect((await realms(tokens.access_token)).status).toBe(401);
    expect(await tokenWorks(t.server, tokens.refresh_token)).toBe(false);
  });

  it('revoke again after a storage failure: resolves true and reports consent.revoked once', async () => {
    // The first attempt marks the grant revoked, then the database fails to save it: the grant
    // still stands. The user (or the operator's `grants revoke`) tries again, and that attempt
    // is the one that revokes it: it must say so, and report it.
    const storage = memoryStorage();
    t = await createTestApp({ storage });
    const events = recordEvents(t);
    const { code } = await obtainCode(t);
    expect((await exchangeCode(t, code)).status).toBe(200);
    const [grant] = await t.storage.grants.list({ clientId: t.codeClient.clientId });
    const save = storage.grants.save.bind(storage.grants);
    let failures = 0;
    storage.grants.save = (record) => {
      if (failures++ === 0) return Promise.reject(new StorageUnavailableError('injected (test)'));
      return save(record);
    };
    await expect(revokeApplication(t.server, grant!.userId, t.codeClient.clientId)).rejects.toThrow(
      StorageUnavailableError,
    );
    expect((await t.storage.grants.list({ clientId: t.codeClient.clientId }))[0]!.revokedAt).toBeNull();

    expect(await revokeApplication(t.server, grant!.userId, t.codeClient.clientId)).toBe(true);
    expect(events.filter((event) => event.type === 'consent.revoked')).toMatchObject([
      { grantId: grant!.grantId, userId: grant!.userId, clientId: t.codeClient.clientId, by: 'user' },
    ]);
    expect(await authorizedApplications(t.server, grant!.userId)).toEqual([]);
  });
});
