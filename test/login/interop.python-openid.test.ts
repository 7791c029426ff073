/**
 * The library against an OpenID 2.0 provider written elsewhere: Debian's python3-openid
 * (openid.server.server), started by test/support/python-openid-provider.py. The relying party
 * runs in stateless mode, so every login here is confirmed by the python library's own
 * check_authentication.
 */
import supertest from 'supertest';
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  vi,
  type MockInstance,
} from 'vitest';
import { RelyingParty } from '../../src/login/openid/relying-party.js';
import { createTestApp, redirectParams, type TestApp } from '../support/app.js';
import { answerConsent, deliverCallback, exchangeCode, pathOf } from '../support/flow.js';
import { expectLoginError, memoryNonces, RETURN_TO, RP_BASE } from '../support/openid-harness.js';
import { startCanary, type TestServer } from '../support/openid-servers.js';
import {
  atProvider,
  codeQuery,
  expectRefusalPage,
  implicitQuery,
  loginCallback,
  startLogin,
  type Agent,
} from '../support/python-flow.js';
import {
  pythonOpenIdAvailability,
  startPythonProvider,
  type PythonProvider,
} from '../support/python-openid.js';
import { rawRequest } from '../support/raw-http.js';

const python = pythonOpenIdAvailability();
const suite = python.ok ? describe : describe.skip;
const missing = python.ok ? '' : ` [NOT RUN: ${python.reason}]`;

/** A copy of `url` with `key` set to `value`, or removed when `value` is null. */
function withParam(url: URL, key: string, value: string | null): URL {
  const copy = new URL(url);
  if (value === null) copy.searchParams.delete(key);
  else copy.searchParams.set(key, value);
  return copy;
}

suite(`python3-openid as the provider: the flows${missing}`, () => {
  let op: PythonProvider;
  let t: TestApp;
  let browser: Agent;
  beforeAll(async () => {
    op = await startPythonProvider();
  });
  afterAll(() => op?.close());
  beforeEach(async () => {
    await op.configure();
    t = await createTestApp({ providers: [{ name: 'Python OP', identifier: op.identifier }] });
    browser = t.agent;
  });
  afterEach(() => t.close());

  it('runs the authorization code flow: login, consent, code, tokens, refresh, API', async () => {
    const before = await op.stats();
    const redirect = new URL(await startLogin(t, browser, 'Python OP'));
    // What our relying party asks the python provider for: checkid_setup, identifier_select.
    expect(redirect.origin + redirect.pathname).toBe(op.endpoint);
    expect(redirect.searchParams.get('openid.mode')).toBe('checkid_setup');
    expect(redirect.searchParams.get('openid.identity')).toBe(
      'http://specs.openid.net/auth/2.0/identifier_select',
    );
    expect(redirect.searchParams.has('openid.assoc_handle')).toBe(false);

    const callback = await atProvider(redirect.href);
    expect(callback.searchParams.get('openid.claimed_id')).toBe(op.userUrl('alice'));
    const consent = await deliverCallback(browser, pathOf(callback.href));
    expect(consent.status, consent.text).toBe(200);
    expect(consent.text).toContain('Do you trust Photo Printer?');

    const done = await answerConsent(t, consent.text, 'allow');
    const params = redirectParams(done.headers.location!);
    expect(params.state).toBe('st-code');
    const tokens = await exchangeCode(t, params.code!);
    expect(tokens.status, tokens.text).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });

    const user = await t.storage.users.findOrCreate(
      { identifier: op.userUrl('alice'), provider: 'openid' },
      'not-created',
      Date.now(),
    );
    expect(user.id).not.toBe('not-created');
    const realms = await browser.get('/v1/realms').set('Authorization', `Bearer ${tokens.body.access_token}`);
    expect(realms.body).toEqual({ realms: [`realm-of-${user.id}`] });

    const refreshed = await browser.post('/oauth/token').type('form').send({
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      redirect_uri: 'https://client.example/cb',
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
    });
    expect(refreshed.status, refreshed.text).toBe(200);

    // The python library was asked to confirm the signature, and the claimed identifier's
    // page was discovered: stateless mode, end to end.
    const after = await op.stats();
    expect(after.check_authentication).toBe((before.check_authentication ?? 0) + 1);
    expect(after.checkid_setup).toBe((before.checkid_setup ?? 0) + 1);
    expect(after.associate ?? 0).toBe(0);
    expect(after.discovery).toBe((before.discovery ?? 0) + 2);
  });

  it('runs the implicit flow: the fragment has exactly the RFC 6749 4.2.2 fields', async () => {
    const callback = await loginCallback(t, browser, 'Python OP', implicitQuery);
    const consent = await deliverCallback(browser, pathOf(callback.href));
    expect(consent.text).toContain('Do you trust Single Page App?');
    const done = await answerConsent(t, consent.text, 'allow');
    const location = new URL(done.headers.location!);
    expect(location.search).toBe('');
    const params = redirectParams(location.href);
    expect(Object.keys(params).sort()).toEqual([
      'access_token',
      'expires_in',
      'iss',
      'scope',
      'state',
      'token_type',
    ]);
    expect(params).toMatchObject({
      token_type: 'Bearer',
      state: 'st-implicit',
      scope: 'realms',
      iss: t.baseUrl,
    });
    const realms = await browser.get('/v1/realms').set('Authorization', `Bearer ${params.access_token}`);
    expect(realms.status).toBe(200);
  });

  it('logs a second user in as themselves', async () => {
    await op.configure({ user: 'bob' });
    const consent = await deliverCallback(
      browser,
      pathOf((await loginCallback(t, browser, 'Python OP')).href),
    );
    expect(consent.status).toBe(200);
    await answerConsent(t, consent.text, 'allow');
    const bob = await t.storage.users.findOrCreate(
      { identifier: op.userUrl('bob'), provider: 'openid' },
      'not-created',
      Date.now(),
    );
    expect(bob.id).not.toBe('not-created');
  });

  describe('refuses tampered responses with a clear page', () => {
    const bob = () => op.userUrl('bob');
    const cases: [string, (cb: URL) => URL, string][] = [
      [
        'a changed identity',
        (cb) => withParam(cb, 'openid.identity', bob()),
        'The provider did not confirm the login response.',
      ],
      [
        'a changed claimed identifier',
        (cb) => withParam(cb, 'openid.claimed_id', bob()),
        'The provider did not confirm the login response.',
      ],
      [
        'both identifiers switched to another user',
        (cb) => withParam(withParam(cb, 'openid.claimed_id', bob()), 'openid.identity', bob()),
        'The provider did not confirm the login response.',
      ],
      [
        'a changed signature',
        (cb) => {
          const sig = Buffer.from(cb.searchParams.get('openid.sig')!, 'base64');
          sig[3] = sig[3]! ^ 0x20;
          return withParam(cb, 'openid.sig', sig.toString('base64'));
        },
        'The provider did not confirm the login response.',
      ],
      [
        'a changed return_to',
        (cb) => {
          const returnTo = new URL(cb.searchParams.get('openid.return_to')!);
          returnTo.searchParams.set('rp_nonce', 'chosen-by-attacker');
          return withParam(cb, 'openid.return_to', returnTo.href);
        },
        'The login response was not meant for this login.',
      ],
      [
        'a changed op_endpoint',
        (cb) => withParam(cb, 'openid.op_endpoint', `${op.url}/elsewhere`),
        'The login response comes from an unexpected provider endpoint.',
      ],
      [
        'a missing openid.ns',
        (cb) => withParam(cb, 'openid.ns', null),
        'The login response is not an OpenID 2.0 response.',
      ],
    ];
    it.each(cases)('%s', async (_name, tamper, message) => {
      const genuine = await loginCallback(t, browser, 'Python OP');
      const res = await browser.get(pathOf(tamper(genuine).href));
      expectRefusalPage(res, message);
      // Nobody was logged in: the user's identifier was never stored.
      const users = await t.storage.users.findOrCreate(
        { identifier: bob(), provider: 'openid' },
        'not-created',
        Date.now(),
      );
      expect(users.id).toBe('not-created');
    });
  });

  describe('refuses replayed responses', () => {
    it('in the same browser after the login, and in another browser', async () => {
      const callback = await loginCallback(t, browser, 'Python OP');
      const consent = await deliverCallback(browser, pathOf(callback.href));
      await answerConsent(t, consent.text, 'allow');

      const again = await browser.get(pathOf(callback.href));
      expectRefusalPage(again, 'no sign-in in progress', { retry: false });
      const elsewhere = await supertest.agent(t.baseUrl).get(pathOf(callback.href));
      expectRefusalPage(elsewhere, 'no sign-in in progress', { retry: false });
    });

    it('in a browser with its own login under way', async () => {
      const callback = await loginCallback(t, browser, 'Python OP');
      const consent = await deliverCallback(browser, pathOf(callback.href));
      await answerConsent(t, consent.text, 'allow');
      // Someone who got hold of the callback URL starts a login of their own and replays it.
      const attacker = supertest.agent(t.baseUrl);
      await startLogin(t, attacker, 'Python OP', { ...codeQuery, state: 'attacker' });
      const replayed = await attacker.get(pathOf(callback.href));
      expectRefusalPage(replayed, 'The login response was not meant for this login.');
    });

    it('twice at once: one wins, the other is refused by its nonce', async () => {
      const callback = await loginCallback(t, browser, 'Python OP');
      const checksBefore = (await op.stats()).check_authentication ?? 0;
      const answers = await Promise.all([
        browser.get(pathOf(callback.href)),
        browser.get(pathOf(callback.href)),
      ]);
      const statuses = answers.map((a) => a.status).sort();
      // The winner is sent on to the resumed request (303, post/redirect/get).
      expect(statuses).toEqual([303, 400]);
      const refused = answers.find((a) => a.status === 400)!;
      expectRefusalPage(refused, 'This login response was already used.');
      // The replay was refused before the provider was asked.
      expect((await op.stats()).check_authentication).toBe(checksBefore + 1);
    });

    it('by the relying party itself, without asking the provider again', async () => {
      const rp = new RelyingParty({
        providers: [{ name: 'Python OP', identifier: op.identifier }],
        returnTo: RETURN_TO,
        realm: `${RP_BASE}/`,
        nonces: memoryNonces(),
        clock: Date.now,
        timeoutMs: 5000,
      });
      const { redirectUrl, state } = await rp.begin(rp.findProvider('Python OP')!);
      const callback = await atProvider(redirectUrl);
      await expect(rp.verify(callback, state)).resolves.toMatchObject({ identifier: op.userUrl('alice') });
      const checks = (await op.stats()).check_authentication;
      await expectLoginError(rp.verify(callback, state), 'replayed');
      expect((await op.stats()).check_authentication).toBe(checks);
    });
  });

  it('shows a cancelled login as a clear page, from which the user can try again', async () => {
    await op.configure({ answer: 'cancel' });
    const callback = await loginCallback(t, browser, 'Python OP');
    expect(callback.searchParams.get('openid.mode')).toBe('cancel');
    const res = await browser.get(pathOf(callback.href));
    expectRefusalPage(res, 'The login was cancelled at the provider.');

    await op.configure();
    const resume = await browser.get('/oauth/authorize/resume');
    expect(resume.status).toBe(200);
    expect(resume.text).toContain('Python OP');
  });
});

/**
 * A hostile provider: the same library, allow-listed next to an honest one, answering for any
 * identity and serving discovery documents that point elsewhere. It must not log anyone in as the
 * honest provider's user, nor make the server contact anything outside the allow-list: a canary
 * server, named by every document that points elsewhere, counts the connections it receives, and
 * every request the server makes (the library's only way out is `fetch`) is recorded.
 */
suite(`python3-openid as a hostile, allow-listed provider${missing}`, () => {
  let honest: PythonProvider;
  let hostile: PythonProvider;
  let canary: TestServer;
  let t: TestApp;
  let outbound: MockInstance<typeof fetch>;
  beforeAll(async () => {
    [honest, hostile, canary] = await Promise.all([
      startPythonProvider(),
      startPythonProvider(),
      startCanary(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([honest?.close(), hostile?.close(), canary?.close()]);
  });
  beforeEach(async () => {
    await Promise.all([honest.configure(), hostile.configure()]);
    t = await createTestApp({
      providers: [
        { name: 'Honest', identifier: honest.identifier },
        { name: 'Hostile', identifier: hostile.identifier },
      ],
    });
    outbound = vi.spyOn(globalThis, 'fetch');
  });
  afterEach(async () => {
    const contacted = outbound.mock.calls.map(([input]) => new URL(String(input)).origin);
    outbound.mockRestore();
    await t.close();
    expect(canary.connections(), 'the canary must never be contacted').toBe(0);
    const allowed = [new URL(honest.url).origin, new URL(hostile.url).origin];
    expect(contacted.filter((origin) => !allowed.includes(origin))).toEqual([]);
  });

  /** Logs alice in at the honest provider: her account exists before the attack. */
  async function aliceLogsInHonestly(): Promise<string> {
    const alice = supertest.agent(t.baseUrl);
    const consent = await deliverCallback(alice, pathOf((await loginCallback(t, alice, 'Honest')).href));
    await answerConsent({ ...t, agent: alice }, consent.text, 'allow');
    const user = await t.storage.users.findOrCreate(
      { identifier: honest.userUrl('alice'), provider: 'openid' },
      'not-created',
      Date.now(),
    );
    expect(user.id).not.toBe('not-created');
    return user.id;
  }

  /** Requests the honest provider received during `action`: none means the server never went there. */
  async function honestRequestsDuring(action: () => Promise<void>): Promise<number> {
    const sum = (s: Record<string, number>) => Object.values(s).reduce((a, b) => a + b, 0);
    const before = sum(await honest.stats());
    await action();
    return sum(await honest.stats()) - before;
  }

  it("cannot assert the honest provider's user: refused before anything is fetched", async () => {
    await aliceLogsInHonestly();
    await hostile.configure({ claimedId: honest.userUrl('alice'), identity: honest.userUrl('alice') });
    const attacker = supertest.agent(t.baseUrl);
    const calls = await honestRequestsDuring(async () => {
      const callback = await loginCallback(t, attacker, 'Hostile');
      expect(callback.searchParams.get('openid.claimed_id')).toBe(honest.userUrl('alice'));
      const res = await attacker.get(pathOf(callback.href));
      expectRefusalPage(res, 'The provider asserted an identifier it is not trusted for.');
    });
    expect(calls).toBe(0);
  });

  it("cannot pass the honest provider's endpoint off as its own", async () => {
    await hostile.configure({
      claimedId: honest.userUrl('alice'),
      identity: honest.userUrl('alice'),
      opEndpoint: honest.endpoint,
    });
    const attacker = supertest.agent(t.baseUrl);
    const callback = await loginCallback(t, attacker, 'Hostile');
    const res = await attacker.get(pathOf(callback.href));
    expectRefusalPage(res, 'The login response comes from an unexpected provider endpoint.');
  });

  it("delegating to the honest provider's user only ever logs in its own, separate account", async () => {
    const aliceId = await aliceLogsInHonestly();
    // Its own claimed identifier, whose page names alice's honest identifier as the local one.
    await hostile.configure({
      claimedId: hostile.userUrl('alice'),
      identity: honest.userUrl('alice'),
      userLocalId: honest.userUrl('alice'),
    });
    const attacker = supertest.agent(t.baseUrl);
    const consent = await deliverCallback(
      attacker,
      pathOf((await loginCallback(t, attacker, 'Hostile')).href),
    );
    expect(consent.status, consent.text).toBe(200);
    const done = await answerConsent({ ...t, agent: attacker }, consent.text, 'allow');
    const code = redirectParams(done.headers.location!).code!;
    const tokens = await exchangeCode({ ...t, agent: attacker }, code);
    const realms = await attacker
      .get('/v1/realms')
      .set('Authorization', `Bearer ${tokens.body.access_token}`);
    expect(realms.status).toBe(200);
    expect(realms.body.realms).not.toContain(`realm-of-${aliceId}`);
    const hostileUser = await t.storage.users.findOrCreate(
      { identifier: hostile.userUrl('alice'), provider: 'openid' },
      'not-created',
      Date.now(),
    );
    expect(hostileUser.id).not.toBe(aliceId);
    expect(realms.body.realms).toEqual([`realm-of-${hostileUser.id}`]);
  });

  it('cannot name an OP endpoint elsewhere in its identifier document', async () => {
    await hostile.configure({ identifierEndpoint: `${canary.url}/openid` });
    const attacker = supertest.agent(t.baseUrl);
    const selection = await attacker.get('/oauth/authorize').query(codeQuery);
    expect(selection.status).toBe(200);
    const login = await attacker.get(
      `/oauth/login?openid_identifier=${encodeURIComponent(hostile.identifier)}`,
    );
    // The provider failed us: 502, with "Try again" at that provider (reliability's provider page).
    expectRefusalPage(login, 'Hostile does not offer OpenID 2.0 login at its own address.', {
      status: 502,
      retry: false,
    });

    // The attacker's browser goes on regardless: the hostile provider signs a response naming the
    // endpoint elsewhere, and the attacker delivers it. No login state exists for it.
    await hostile.configure({ opEndpoint: `${canary.url}/openid` });
    const forged = await rawRequest(
      `${hostile.endpoint}?${new URLSearchParams({
        'openid.ns': 'http://specs.openid.net/auth/2.0',
        'openid.mode': 'checkid_setup',
        'openid.claimed_id': 'http://specs.openid.net/auth/2.0/identifier_select',
        'openid.identity': 'http://specs.openid.net/auth/2.0/identifier_select',
        'openid.return_to': `${t.baseUrl}/oauth/login/callback`,
        'openid.realm': `${t.baseUrl}/`,
      })}`,
    );
    expect(new URL(forged.location!).searchParams.get('openid.op_endpoint')).toBe(`${canary.url}/openid`);
    const res = await attacker.get(pathOf(forged.location!));
    expectRefusalPage(res, 'No login is in progress in this session.');
  });

  it('cannot send discovery elsewhere with X-XRDS-Location or a redirect', async () => {
    for (const settings of [
      { identifierXrdsLocation: `${canary.url}/xrds` },
      { identifierRedirect: `${canary.url}/` },
    ]) {
      await hostile.configure(settings);
      const attacker = supertest.agent(t.baseUrl);
      await attacker.get('/oauth/authorize').query(codeQuery);
      const login = await attacker.get(
        `/oauth/login?openid_identifier=${encodeURIComponent(hostile.identifier)}`,
      );
      expectRefusalPage(login, 'Hostile could not be reached.', { status: 502, retry: false });
    }
  });

  it("cannot have its claimed identifier's page point discovery or the endpoint elsewhere", async () => {
    for (const [settings, message] of [
      [{ userXrdsLocation: `${canary.url}/xrds` }, 'The asserted identifier could not be verified.'],
      [{ userEndpoint: `${canary.url}/openid` }, 'The provider is not authorised to assert this identifier.'],
    ] as const) {
      await hostile.configure({ ...settings, user: 'mallory' });
      const attacker = supertest.agent(t.baseUrl);
      const callback = await loginCallback(t, attacker, 'Hostile');
      const res = await attacker.get(pathOf(callback.href));
      expectRefusalPage(res, message);
    }
  });

  it('is reached only through its own allow-listed identifier', async () => {
    const attacker = supertest.agent(t.baseUrl);
    await attacker.get('/oauth/authorize').query(codeQuery);
    for (const identifier of [`${canary.url}/`, hostile.userUrl('alice'), `${hostile.url}/openid`]) {
      const res = await attacker.get(`/oauth/login?openid_identifier=${encodeURIComponent(identifier)}`);
      expect(res.status).toBe(400);
      expect(res.text).toContain('This OpenID provider is not accepted here.');
    }
    const direct = await rawRequest(
      `${t.baseUrl}/oauth/authorize?${new URLSearchParams({ ...codeQuery, opIdentifier: `${canary.url}/` })}`,
    );
    expect(direct.status).toBe(400);
    expect(outbound).not.toHaveBeenCalled();
  });
});
