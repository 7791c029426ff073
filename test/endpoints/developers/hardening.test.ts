/**
 * The developer page after a red-team review (issue 40): a change of where codes go needs a recent
 * sign-in and a new review by the operator; a suspended application cannot be deleted away; a
 * storage that forgets the owner is refused; names hide nothing; the draft kept across a sign-in
 * comes back for its own account, and an authorization pending in the browser does not take it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage, updateClient, rotateClientSecret } from '../../../src/index.js';
import { hashSecret } from '../../../src/crypto/secrets.js';
import { secretIsClients } from '../../../src/rules/client-kind.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { deliverCallback, pathOf, signInAtProvider } from '../../support/flow.js';
import {
  WEB_APP,
  createApp,
  credentialsOf,
  formBody,
  formEndingWith,
  mountDeveloperPage,
  postForm,
  signInAsMember,
} from '../../support/developers.js';

let t: TestApp;
afterEach(() => t?.close());

async function developerApp(options: Parameters<typeof createTestApp>[0] = {}, skew = { ms: 0 }) {
  t = await createTestApp({
    scopes: { realms: 'See your realms' },
    clock: () => Date.now() + skew.ms,
    ...options,
  });
  mountDeveloperPage(t);
  return t;
}

async function appForm(clientId: string, suffix: string) {
  const page = await t.agent.get('/developers/app').query({ client_id: clientId });
  expect(page.status).toBe(200);
  return formEndingWith(page.text, suffix);
}

describe('changing where an application sends codes', () => {
  it('needs a recent sign-in; the change form comes back filled in after it', async () => {
    const skew = { ms: 0 };
    await developerApp({}, skew);
    await signInAsMember(t, 'alice');
    const { clientId } = credentialsOf((await createApp(t, { ...WEB_APP, client_type: 'public' })).res.text);
    skew.ms = 20 * 60_000;
    const form = await appForm(clientId, '/developers/app/update');
    const moved = { ...WEB_APP, redirect_uri: 'https://elsewhere.example/cb' };
    const stale = await postForm(t, t.agent, form.action, formBody(form, moved));
    expect(stale.status).toBe(303);
    expect(stale.headers.location).toContain('for=developers');
    expect((await t.storage.clients.find(clientId))!.redirectUri).toBe(WEB_APP.redirect_uri);

    skew.ms = 0;
    const toProvider = await t.agent.get(pathOf(stale.headers.location!));
    const back = await deliverCallback(
      t.agent,
      pathOf(await signInAtProvider(toProvider.headers.location!, 'alice')),
    );
    expect(back.headers.location).toBe(`${t.baseUrl}/developers/app?client_id=${clientId}`);
    const page = await t.agent.get('/developers/app').query({ client_id: clientId });
    const again = formEndingWith(page.text, '/developers/app/update');
    expect(page.text).toContain('You signed in again');
    expect(page.text).toContain('value="https://elsewhere.example/cb"');
    expect((await postForm(t, t.agent, again.action, formBody(again, moved))).status).toBe(303);
    expect((await t.storage.clients.find(clientId))!.redirectUri).toBe('https://elsewhere.example/cb');
  });

  it("takes back the operator's verification, and with approval required waits for it again", async () => {
    await developerApp({ developerApps: { requireApproval: true } });
    await signInAsMember(t);
    const { clientId } = credentialsOf((await createApp(t)).res.text);
    await t.storage.clients.update!(clientId, { verified: true, awaitingApproval: false });
    // A change of the teams alone keeps both: nothing the operator vouched for changed.
    const description = await appForm(clientId, '/developers/app/update');
    expect((await postForm(t, t.agent, description.action, formBody(description, WEB_APP))).status).toBe(303);
    expect(await t.storage.clients.find(clientId)).toMatchObject({ verified: true, awaitingApproval: false });

    const form = await appForm(clientId, '/developers/app/update');
    const renamed = { ...WEB_APP, name: 'Official Site Wallet', redirect_uri: 'https://evil.example/steal' };
    expect((await postForm(t, t.agent, form.action, formBody(form, renamed))).status).toBe(303);
    expect(await t.storage.clients.find(clientId)).toMatchObject({
      applicationName: 'Official Site Wallet',
      verified: false,
      awaitingApproval: true,
    });
  });
});

describe('suspension', () => {
  it('a suspended application cannot be deleted (the suspension would go with it)', async () => {
    await developerApp();
    await signInAsMember(t);
    const { clientId } = credentialsOf((await createApp(t)).res.text);
    const form = await appForm(clientId, '/developers/app/delete');
    await t.storage.clients.update!(clientId, { disabled: true });
    const refused = await postForm(t, t.agent, form.action, formBody(form, { confirm: 'yes' }));
    expect(refused.status).toBe(403);
    expect(await t.storage.clients.find(clientId)).not.toBeNull();
    expect((await createApp(t, { ...WEB_APP, name: 'Another' })).res.status).toBe(403);
  });
});

describe('a storage that forgets what a member application is', () => {
  it('refuses the creation and takes the client back, rather than make it look like the operator’s', async () => {
    const storage = memoryStorage();
    const create = storage.clients.create.bind(storage.clients);
    storage.clients.create = ({ ownerId: _owner, awaitingApproval: _approval, ...client }) => create(client);
    await developerApp({ storage, developerApps: { requireApproval: true } });
    await signInAsMember(t);
    const { res } = await createApp(t);
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('id="client-secret"');
    expect((await storage.clients.list()).map((c) => c.clientId).sort()).toEqual([
      'code-client',
      'implicit-client',
    ]);
  });
});

describe('names that hide another', () => {
  it.each([
    ['a Hangul filler', 'Pay\u3164pal'],
    ['a combining grapheme joiner', 'Pay\u034Fpal'],
    ['a variation selector between letters', 'Pay\uFE0Fpal'],
    ['a line separator', 'Steam\u2028Support'],
    ['a pile of combining marks', 'Z\u0301\u0302\u0303\u0304algo'],
    ['a blank Braille pattern alone', '\u2800'],
  ])('refuses %s', async (_, name) => {
    await developerApp();
    await signInAsMember(t);
    const { res } = await createApp(t, { ...WEB_APP, name });
    expect(res.status).toBe(400);
  });

  it('keeps an emoji with its colour selector, and shows a home page host in punycode', async () => {
    await developerApp();
    await signInAsMember(t);
    const { res } = await createApp(t, {
      ...WEB_APP,
      name: 'Realm ❤️ Stats',
      homepage: 'https://p\u0430ypal.example/',
    });
    expect(res.status).toBe(200);
    const { clientId } = credentialsOf(res.text);
    expect(await t.storage.clients.find(clientId)).toMatchObject({
      applicationName: 'Realm ❤️ Stats',
      homepageUri: 'https://xn--pypal-4ve.example/',
    });
  });

  it("shows the maker's provider name without what would reorder the page, and where the browser goes", async () => {
    await developerApp();
    await signInAsMember(t);
    const { clientId } = credentialsOf((await createApp(t)).res.text);
    const owner = (await t.storage.clients.find(clientId))!.ownerId!;
    await t.storage.users.saveClaims!(owner, { name: 'Bob \u202Etfoseht yb deifirev' });
    const consent = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: WEB_APP.redirect_uri,
      scope: 'realms',
      state: 's',
    });
    expect(consent.text).toContain('Made by <strong><bdi>Bob tfoseht yb deifirev</bdi></strong>');
    expect(consent.text).not.toContain('\u202E');
    expect(consent.text).toContain('After your answer you go back to <strong>stats.example</strong>');
  });
});

describe('odd requests', () => {
  it('a NUL in the query names no application (404, not a database error)', async () => {
    await developerApp();
    await signInAsMember(t);
    const res = await t.agent.get('/developers/app?client_id=%00');
    expect(res.status).toBe(404);
  });

  it('the draft comes back for the account that filled it in only, and a pending authorization does not take it', async () => {
    const skew = { ms: 0 };
    await developerApp({}, skew);
    await signInAsMember(t, 'alice');
    // An authorization of another application is pending in this browser.
    await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
      state: 'pending',
      prompt: 'login',
    });
    skew.ms = 6 * 60_000;
    const { res } = await createApp(t, { ...WEB_APP, name: 'Drafted' });
    expect(res.status).toBe(303);
    skew.ms = 0;
    const toProvider = await t.agent.get(pathOf(res.headers.location!));
    const asMallory = await deliverCallback(
      t.agent,
      pathOf(await signInAtProvider(toProvider.headers.location!, 'mallory')),
    );
    expect(asMallory.headers.location).toBe(`${t.baseUrl}/developers`);
    expect((await t.agent.get('/developers/new')).text).not.toContain('value="Drafted"');
  });
});

describe('the previous secret', () => {
  it('goes when the operator makes a client public or gives it a new secret', async () => {
    const storage = memoryStorage();
    await developerApp({ storage });
    await signInAsMember(t);
    const { clientId, clientSecret } = credentialsOf((await createApp(t)).res.text);
    const previous = { hash: hashSecret(clientSecret!), expiresAt: Date.now() + 3_600_000 };
    await storage.clients.update(clientId, { previousSecret: previous });
    await updateClient(storage, clientId, { public: true });
    const confidential = await updateClient(storage, clientId, { public: false });
    expect(secretIsClients(clientSecret!, confidential, Date.now())).toBe(false);
    await storage.clients.update(clientId, { previousSecret: previous });
    await rotateClientSecret(storage, clientId);
    expect(secretIsClients(clientSecret!, (await storage.clients.find(clientId))!, Date.now())).toBe(false);
  });
});
