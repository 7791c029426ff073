/**
 * The device authorization grant (RFC 8628) end to end: a device (these requests) asks for codes
 * and polls; a person (a cookie-keeping agent) types the code on the verification page, signs in
 * at the development provider and answers the consent page. The server's clock runs `ahead` of
 * the real one as the test moves it (the provider's signed response nonces keep the real time).
 */
import supertest from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerClient, type ServerEvent } from '../../src/index.js';
import { revokeApplication } from '../../src/endpoints/applications/list.js';
import type { DeviceAuthorizationResponse } from '../../src/grants/device.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { answerDevice, pollToken, requestDeviceCode, typeUserCode } from '../support/device.js';
import { parseForm } from '../support/flow.js';
import { subscribe } from '../support/channels.js';

let t: TestApp;
let ahead: number;
let events: ServerEvent[];
let secretDevice: { clientId: string; clientSecret: string };

beforeEach(async () => {
  ahead = 0;
  t = await createTestApp({
    clock: () => Date.now() + ahead,
    scopes: { realms: 'See your realms', profile: 'Your name' },
  });
  events = [];
  t.server.events.on('*', (event) => void events.push(event));
  await registerClient(t.storage, {
    clientId: 'cli-tool',
    applicationName: 'Realm CLI',
    grantType: 'device_code',
    public: true,
    scopes: ['realms', 'profile'],
    defaultScopes: ['realms'],
  });
  const issued = await registerClient(t.storage, {
    clientId: 'tv-app',
    applicationName: 'Realm TV',
    grantType: 'device_code',
    scopes: ['realms'],
  });
  secretDevice = { clientId: issued.clientId, clientSecret: issued.clientSecret! };
});
afterEach(() => t.close());

/** Starts a flow for the public CLI client; resolves the device authorization response. */
async function start(fields: Record<string, string> = {}) {
  const res = await requestDeviceCode(t, { client_id: 'cli-tool', ...fields });
  expect(res.status).toBe(200);
  return res.body as DeviceAuthorizationResponse;
}

const poll = (deviceCode: string, clientId = 'cli-tool') =>
  pollToken(t, { device_code: deviceCode, client_id: clientId });

describe('device authorization endpoint (RFC 8628 3.1, 3.2)', () => {
  it('answers a public client with codes a person can type, the verification URIs, the lifetime and interval', async () => {
    const res = await requestDeviceCode(t, { client_id: 'cli-tool', scope: 'realms profile' });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.body;
    expect(body.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(body.device_code).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(body.verification_uri).toBe(`${t.baseUrl}/oauth/device`);
    expect(body.verification_uri_complete).toBe(`${t.baseUrl}/oauth/device?user_code=${body.user_code}`);
    expect(body).toMatchObject({ expires_in: 600, interval: 5 });
    expect(events.map((e) => e.type)).toContain('device.requested');
  });

  it('authenticates a confidential device client as the token endpoint does', async () => {
    const without = await requestDeviceCode(t, { client_id: secretDevice.clientId });
    expect(without.status).toBe(401);
    expect(without.body.error).toBe('invalid_client');
    const wrong = await requestDeviceCode(t, { client_id: secretDevice.clientId, client_secret: 'nope' });
    expect(wrong.status).toBe(401);
    const right = await requestDeviceCode(t, {
      client_id: secretDevice.clientId,
      client_secret: secretDevice.clientSecret,
    });
    expect(right.status).toBe(200);
  });

  it('refuses a client not registered for the grant, a scope it may not have, and a public client presenting a secret', async () => {
    const code = await requestDeviceCode(t, {
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
    });
    expect(code.status).toBe(400);
    expect(code.body.error).toBe('unauthorized_client');
    const scope = await requestDeviceCode(t, { client_id: 'cli-tool', scope: 'admin' });
    expect(scope.body.error).toBe('invalid_scope');
    const secret = await requestDeviceCode(t, { client_id: 'cli-tool', client_secret: 'x' });
    expect(secret.status).toBe(401);
    expect(secret.body.error).toBe('invalid_client');
    const unknown = await requestDeviceCode(t, { client_id: 'nobody' });
    expect(unknown.status).toBe(401);
  });

  it('limits a flood of requests from one client with 429 and Retry-After, until the minute ends', async () => {
    t.server.options.device.maxRequestsPerClient = 3;
    for (let i = 0; i < 3; i++) await start();
    const flooded = await requestDeviceCode(t, { client_id: 'cli-tool' });
    expect(flooded.status).toBe(429);
    expect(Number(flooded.headers['retry-after'])).toBeGreaterThan(0);
    ahead += 60_000;
    await start();
  });
});

describe('the flow, person and device', () => {
  it('pending until the person approves; then tokens that open the API, once', async () => {
    const device = await start();
    const pending = await poll(device.device_code);
    expect(pending.status).toBe(400);
    expect(pending.body.error).toBe('authorization_pending');

    const { done, consent } = await answerDevice(t, device.user_code, 'allow');
    expect(consent).toContain('Realm CLI');
    expect(consent).toContain(device.user_code);
    expect(consent).toContain('realms');
    expect(done.status).toBe(200);
    expect(done.text).toContain('Device connected');

    ahead += 5000;
    const tokens = await poll(device.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'realms' });
    expect(tokens.body.refresh_token).toBeTruthy();
    expect(tokens.body.id_token).toBeUndefined();
    const api = await t.agent.get('/v1/realms').set('Authorization', `Bearer ${tokens.body.access_token}`);
    expect(api.status).toBe(200);

    ahead += 5000;
    const again = await poll(device.device_code);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    const types = events.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['device.requested', 'device.authorized', 'token.issued']));
    expect(events.find((e) => e.type === 'token.issued')).toMatchObject({ grantType: 'device_code' });
  });

  it('slow_down whenever the device polls before its interval, which grows by 5 seconds each time', async () => {
    const device = await start();
    expect((await poll(device.device_code)).body.error).toBe('authorization_pending');
    ahead += 1000;
    const fast = await poll(device.device_code);
    expect(fast.status).toBe(400);
    expect(fast.body.error).toBe('slow_down');
    // The interval is 10 s now: 5 s later is still too soon, and makes it 15 s.
    ahead += 5000;
    expect((await poll(device.device_code)).body.error).toBe('slow_down');
    ahead += 14_000;
    expect((await poll(device.device_code)).body.error).toBe('slow_down');
    ahead += 20_000;
    expect((await poll(device.device_code)).body.error).toBe('authorization_pending');
    ahead += 20_000;
    expect((await poll(device.device_code)).body.error).toBe('authorization_pending');
  });

  it('access_denied once the person denies, with a page that says so', async () => {
    const device = await start();
    const { done } = await answerDevice(t, device.user_code, 'deny');
    expect(done.status).toBe(200);
    expect(done.text).toContain('Request denied');
    ahead += 5000;
    const denied = await poll(device.device_code);
    expect(denied.status).toBe(400);
    expect(denied.body.error).toBe('access_denied');
    expect(events.map((e) => e.type)).toContain('device.denied');
  });

  it('expired_token once the code has expired, and the user code no longer works', async () => {
    const device = await start();
    ahead += 600_000;
    const expired = await poll(device.device_code);
    expect(expired.status).toBe(400);
    expect(expired.body.error).toBe('expired_token');
    const typed = await typeUserCode(t, device.user_code);
    expect(typed.status).toBe(400);
    expect(typed.text).toContain('wrong, has expired or was used already');
  });

  it('says expired_token for an hour past the expiry, then the request is gone (invalid_grant)', async () => {
    const device = await start();
    ahead += 600_000 + 3_599_000;
    expect((await poll(device.device_code)).body.error).toBe('expired_token');
    ahead += 2000;
    expect((await poll(device.device_code)).body.error).toBe('invalid_grant');
  });

  it('another client presenting the device code gets invalid_grant; an unknown code too', async () => {
    const device = await start();
    const other = await pollToken(t, {
      device_code: device.device_code,
      client_id: secretDevice.clientId,
      client_secret: secretDevice.clientSecret,
    });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('invalid_grant');
    expect((await poll('not-a-device-code')).body.error).toBe('invalid_grant');
    const codeClient = await pollToken(t, {
      device_code: device.device_code,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
    });
    expect(codeClient.body.error).toBe('unauthorized_client');
    const missing = await pollToken(t, { client_id: 'cli-tool' });
    expect(missing.body.error).toBe('invalid_request');
  });

  it('a used user code gives a page that says so, and lets the person try again', async () => {
    const device = await start();
    await answerDevice(t, device.user_code, 'allow');
    const again = await typeUserCode(t, device.user_code);
    expect(again.status).toBe(400);
    expect(again.text).toContain('wrong, has expired or was used already');
    expect(parseForm(again.text).fields).toHaveProperty('user_code');
  });

  it('asks the person every time, even for an application they trust already', async () => {
    const first = await start();
    await answerDevice(t, first.user_code, 'allow');
    const second = await start();
    const typed = await typeUserCode(t, second.user_code.toLowerCase().replace('-', ' '));
    expect(typed.status).toBe(200);
    expect(typed.text).toContain('name="decision"');
    expect(typed.text).toContain(second.user_code);
  });

  it('verification_uri_complete fills the code in and waits for the person to confirm', async () => {
    const device = await start();
    const complete = new URL(device.verification_uri_complete);
    const page = await t.agent.get(complete.pathname + complete.search);
    expect(page.status).toBe(200);
    expect(parseForm(page.text).fields.user_code).toBe(device.user_code);
    expect(page.text).not.toContain('name="decision"');
    const hostile = await t.agent.get('/oauth/device').query({ user_code: '"><script>alert(1)</script>' });
    expect(hostile.status).toBe(200);
    expect(hostile.text).not.toContain('<script>alert');
    expect(parseForm(hostile.text).fields.user_code).toBe('');
  });
});

describe('guessing user codes', () => {
  it('ten wrong codes from one address hold every attempt from it, the right one included, for the minute', async () => {
    const device = await start();
    for (let i = 0; i < 10; i++) {
      const wrong = await typeUserCode(t, 'BBBB-BBBB');
      expect(wrong.status).toBe(400);
    }
    const traced = subscribe('device');
    const limited = await typeUserCode(t, device.user_code).finally(traced.stop);
    expect(limited.status).toBe(429);
    // A page rendered with 429 is a refusal in the figures and traces, not a success.
    const ends = traced.seen.filter((s) => s.event === 'asyncEnd').map((s) => s.context);
    expect(ends.at(-1)).toMatchObject({ method: 'POST', status: 429, outcome: 'error' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.text).toContain('Too many codes were tried');
    expect(events.filter((e) => e.type === 'device.user_code_rejected')).toHaveLength(11);
    expect(events.filter((e) => e.type === 'rate_limit.exceeded')).toEqual([
      expect.objectContaining({ limit: 'device_user_code', per: 'address' }),
    ]);
    ahead += 60_000;
    const { done } = await answerDevice(t, device.user_code, 'allow');
    expect(done.text).toContain('Device connected');
  });

  it('the overall limit holds every address, and no longer than its minute', async () => {
    t.server.options.device.maxAnonymousUserCodeAttempts = 3;
    t.server.options.device.maxUserCodeAttempts = 100;
    const device = await start();
    for (let i = 0; i < 3; i++) await typeUserCode(t, 'BBBB-BBBB');
    expect((await typeUserCode(t, device.user_code)).status).toBe(429);
    ahead += 60_000;
    expect((await typeUserCode(t, device.user_code)).status).toBe(200);
  });
});

describe("what anyone may do with a public client_id (a red team's findings)", () => {
  it("failed authentications named with a public client's id do not lock its users out", async () => {
    const device = await start();
    for (let i = 0; i < 12; i++) {
      await pollToken(t, { device_code: 'x', client_id: 'cli-tool', client_secret: 'junk' });
    }
    // The address that sent them is held; the client's other users are not.
    t.app.set('trust proxy', 'loopback');
    const other = await t.agent
      .post('/oauth/token')
      .type('form')
      .set('X-Forwarded-For', '198.51.100.7')
      .send({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: device.device_code,
        client_id: 'cli-tool',
      });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('authorization_pending');
  });

  it("a flood of device requests with a public client's id holds the address that sends it, not the others", async () => {
    t.server.options.device.maxRequestsPerClient = 2;
    t.app.set('trust proxy', 'loopback');
    const from = (address: string) =>
      requestDeviceCode(t, { client_id: 'cli-tool' }, { 'X-Forwarded-For': address });
    expect((await from('203.0.113.1')).status).toBe(200);
    expect((await from('203.0.113.1')).status).toBe(200);
    expect((await from('203.0.113.1')).status).toBe(429);
    expect((await from('203.0.113.2')).status).toBe(200);
  });

  it('a flood of anonymous guesses does not hold a person who signs in first', async () => {
    const first = await start();
    await answerDevice(t, first.user_code, 'allow'); // signs the person in
    t.server.options.device.maxAnonymousUserCodeAttempts = 2;
    const anonymous = supertest.agent(t.baseUrl);
    const guess = () =>
      anonymous
        .post('/oauth/device')
        .type('form')
        .set('Origin', new URL(t.baseUrl).origin)
        .send({ user_code: 'BBBB-BBBB' });
    await guess();
    await guess();
    expect((await guess()).status).toBe(429);
    const second = await start();
    const typed = await typeUserCode(t, second.user_code);
    expect(typed.status).toBe(200);
    expect(typed.text).toContain('name="decision"');
  });

  it('refuses a code form that says nothing of where it comes from (no CSRF token to check)', async () => {
    const device = await start();
    const unmarked = await t.agent.post('/oauth/device').type('form').send({ user_code: device.user_code });
    expect(unmarked.status).toBe(403);
    const crossSite = await t.agent
      .post('/oauth/device')
      .type('form')
      .set('Sec-Fetch-Site', 'cross-site')
      .send({ user_code: device.user_code });
    expect(crossSite.status).toBe(403);
  });

  it('refuses Origin: null like no Origin: an opaque origin (a sandboxed frame, a data: page) tells nothing', async () => {
    const device = await start();
    const opaque = await t.agent
      .post('/oauth/device')
      .type('form')
      .set('Origin', 'null')
      .send({ user_code: device.user_code });
    expect(opaque.status).toBe(403);
    expect(opaque.text).toContain('submitted from another site');
    // Nothing was started: the code is still waiting for its person.
    expect((await poll(device.device_code)).body.error).toBe('authorization_pending');
  });

  it('the code page keeps its own origin on its posts (Referrer-Policy: same-origin), every other page sends none', async () => {
    const device = await start();
    const entry = await t.agent.get('/oauth/device');
    expect(entry.headers['referrer-policy']).toBe('same-origin');
    const wrong = await typeUserCode(t, 'BCDF-GHJK');
    expect(wrong.status).toBe(400);
    expect(wrong.headers['referrer-policy']).toBe('same-origin');
    // The page a live code leads to (the sign-in) is like every other page: no referrer at all.
    const next = await typeUserCode(t, device.user_code);
    expect(next.status).toBe(200);
    expect(next.headers['referrer-policy']).toBe('no-referrer');
  });
});

describe('device grants are grants', () => {
  it('refresh tokens of a public device client rotate, and revoking the grant ends them', async () => {
    const device = await start();
    await answerDevice(t, device.user_code, 'allow');
    const tokens = (await poll(device.device_code)).body;
    const refreshed = await t.agent
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'cli-tool' });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(tokens.refresh_token);

    const apps = await t.agent.get('/oauth/applications');
    expect(apps.text).toContain('Realm CLI');
    const [grant] = await t.storage.grants.list({ clientId: 'cli-tool' });
    await revokeApplication(t.server, grant!.userId, 'cli-tool');
    const after = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token,
      client_id: 'cli-tool',
    });
    expect(after.status).toBe(400);
    expect(after.body.error).toBe('invalid_grant');
    const api = await t.agent.get('/v1/realms').set('Authorization', `Bearer ${refreshed.body.access_token}`);
    expect(api.status).toBe(401);
  });

  it('an approval whose grant is revoked before the poll gives no tokens', async () => {
    const device = await start();
    await answerDevice(t, device.user_code, 'allow');
    const [grant] = await t.storage.grants.list({ clientId: 'cli-tool' });
    await revokeApplication(t.server, grant!.userId, 'cli-tool');
    const res = await poll(device.device_code);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  it('a device client cannot use the authorization endpoint: a page, no redirect', async () => {
    const res = await t.agent
      .get('/oauth/authorize')
      .query({ response_type: 'code', client_id: 'cli-tool', redirect_uri: 'https://client.example/cb' });
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });
});
