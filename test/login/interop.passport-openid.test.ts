/**
 * The login seam with a strategy written elsewhere: passport-openid (its engine `openid` forced
 * to 2.0.18 by package.json `overrides`) plugged in as `login.strategy`, against the
 * python3-openid provider. passport-openid uses associations by default, so this also runs the
 * python provider in the other mode of OpenID 2.0: association, then local signature checks.
 */
import { Strategy as PassportOpenIdStrategy } from 'passport-openid';
import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, redirectParams, type TestApp } from '../support/app.js';
import { answerConsent, deliverCallback, exchangeCode, pathOf } from '../support/flow.js';
import { startCanary } from '../support/openid-servers.js';
import { codeQuery, expectRefusalPage, loginCallback } from '../support/python-flow.js';
import {
  pythonOpenIdAvailability,
  startPythonProvider,
  type PythonProvider,
} from '../support/python-openid.js';

const python = pythonOpenIdAvailability();
const suite = python.ok ? describe : describe.skip;
const missing = python.ok ? '' : ` [NOT RUN: ${python.reason}]`;

/** The library's documented setup: a passport strategy whose success() gets `{ identifier, provider }`. */
function passportOpenId(baseUrl: string) {
  return new PassportOpenIdStrategy(
    // `secure` (strict) stays at its default, true: false would let a failed discovery fall back to
    // www.google.com and allow unencrypted associations over http.
    { returnURL: `${baseUrl}/oauth/login/callback`, realm: `${baseUrl}/` },
    (identifier, done) => done(null, { identifier, provider: 'Python OP' }),
  );
}

suite(`passport-openid as the login strategy, against python3-openid${missing}`, () => {
  let op: PythonProvider;
  let running: TestApp | undefined;
  beforeAll(async () => {
    op = await startPythonProvider();
  });
  afterAll(() => op?.close());
  afterEach(async () => {
    await running?.close();
    running = undefined;
    await op.configure();
  });

  async function app(): Promise<TestApp> {
    running = await createTestApp((baseUrl) => ({
      providers: [{ name: 'Python OP', identifier: op.identifier }],
      login: { strategy: passportOpenId(baseUrl) },
    }));
    return running;
  }

  it('is the engine package.json forces', () => {
    const require = createRequire(import.meta.url);
    const strategyDir = require.resolve('passport-openid');
    const engine = createRequire(strategyDir)('openid/package.json') as { version: string };
    expect(engine.version).toBe('2.0.18');
  });

  it('runs the whole code flow: login, consent, tokens, API', async () => {
    const t = await app();
    const before = await op.stats();
    const callback = await loginCallback(t, t.agent, 'Python OP');
    // passport-openid asks with identifier_select too, but under an association.
    expect(callback.searchParams.get('openid.assoc_handle')).toMatch(/^\{HMAC-SHA/);
    const consent = await deliverCallback(t.agent, pathOf(callback.href));
    expect(consent.status, consent.text).toBe(200);
    expect(consent.text).toContain('Do you trust Photo Printer?');
    const done = await answerConsent(t, consent.text, 'allow');
    const tokens = await exchangeCode(t, redirectParams(done.headers.location!).code!);
    expect(tokens.status, tokens.text).toBe(200);
    const realms = await t.agent.get('/v1/realms').set('Authorization', `Bearer ${tokens.body.access_token}`);
    expect(realms.status).toBe(200);

    const user = await t.storage.users.findOrCreate(
      { identifier: op.userUrl('alice'), provider: 'Python OP' },
      'not-created',
      Date.now(),
    );
    expect(user.id).not.toBe('not-created');
    expect(realms.body).toEqual({ realms: [`realm-of-${user.id}`] });
    const after = await op.stats();
    expect(after.associate).toBe((before.associate ?? 0) + 1);
    expect(after.check_authentication ?? 0).toBe(before.check_authentication ?? 0);
  });

  it('still only runs for the configured provider', async () => {
    const t = await app();
    await t.agent
      .get('/oauth/authorize')
      .query({ response_type: 'code', client_id: 'code-client', redirect_uri: 'https://client.example/cb' });
    const res = await t.agent.get(
      `/oauth/login?openid_identifier=${encodeURIComponent(op.userUrl('alice'))}`,
    );
    expect(res.status).toBe(400);
    expect(res.text).toContain('This OpenID provider is not accepted here.');
  });

  it('shows a cancelled login as a page with a way to try again', async () => {
    const t = await app();
    await op.configure({ answer: 'cancel' });
    const callback = await loginCallback(t, t.agent, 'Python OP');
    expectRefusalPage(await t.agent.get(pathOf(callback.href)), 'OpenID authentication canceled');
  });

  it('refuses a tampered response, as a server error: passport-openid reports it through error()', async () => {
    const t = await app();
    const callback = await loginCallback(t, t.agent, 'Python OP');
    const forged = new URL(callback);
    forged.searchParams.set('openid.claimed_id', op.userUrl('bob'));
    forged.searchParams.set('openid.identity', op.userUrl('bob'));
    const res = await t.agent.get(pathOf(forged.href));
    expect(res.status).toBe(500);
    expect(res.text).toContain('The sign-in failed unexpectedly.');
    const bob = await t.storage.users.findOrCreate(
      { identifier: op.userUrl('bob'), provider: 'Python OP' },
      'not-created',
      Date.now(),
    );
    expect(bob.id).toBe('not-created');
  });

  it('fetches a forged, unsigned claimed identifier on any host: what the built-in strategy refuses', async () => {
    // Recorded so the README's comparison stays true: if this starts failing, passport-openid
    // changed and the README's "Using passport-openid" must be revisited.
    const t = await app();
    const canary = await startCanary();
    try {
      await t.agent.get('/oauth/authorize').query(codeQuery);
      // A login really started at the configured provider: the callback is the one it waits for.
      const started = await t.agent.get('/oauth/login').query({ openid_identifier: op.identifier });
      expect(started.status).toBe(302);
      const forged = new URLSearchParams({
        'openid.ns': 'http://specs.openid.net/auth/2.0',
        'openid.mode': 'id_res',
        'openid.op_endpoint': `${canary.url}/op`,
        'openid.claimed_id': `${canary.url}/anyone`,
        'openid.identity': `${canary.url}/anyone`,
        'openid.return_to': `${t.baseUrl}/oauth/login/callback`,
        'openid.response_nonce': `${new Date().toISOString().slice(0, 19)}Zforged`,
        'openid.assoc_handle': 'forged',
        'openid.signed': 'op_endpoint,claimed_id,identity,return_to,response_nonce,assoc_handle',
        'openid.sig': 'AAAA',
      });
      const res = await t.agent.get(`/oauth/login/callback?${forged}`);
      expect(res.status).toBe(500);
      expect(canary.connections()).toBeGreaterThan(0);
    } finally {
      await canary.close();
    }
  });
});
