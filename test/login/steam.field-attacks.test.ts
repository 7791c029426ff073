/**
 * Issue 18, "Attacks from the field": the attacks that broke Steam relying parties, against a
 * Steam-like provider (test/support/steam-like-provider.py on python3-openid) configured by hand
 * in the allow-list, and the attacker's own OpenID server (python3-openid too). Each must fail with
 * a refusal page, no user written, no code or token, and no request to anyone that the attack
 * should not cause. Which check each test guards is named in its title.
 */
import supertest from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IDENTIFIER_SELECT } from '../../src/login/openid/constants.js';
import { createTestApp, redirectParams, type TestApp } from '../support/app.js';
import { answerConsent, deliverCallback, exchangeCode, pathOf } from '../support/flow.js';
import { startAttackerProvider, type AttackerProvider } from '../support/attacker-provider.js';
import { codeQuery, expectRefusalPage, startLogin } from '../support/python-flow.js';
import { pythonOpenIdAvailability } from '../support/python-openid.js';
import {
  approveAtProvider,
  ATTACKER_STEAM_ID,
  startSteamLikeProvider,
  VICTIM_STEAM_ID,
  type SteamLikeProvider,
} from '../support/steam-like-provider.js';

const python = pythonOpenIdAvailability();
const suite = python.ok ? describe : describe.skip;
const missing = python.ok ? '' : ` [NOT RUN: ${python.reason}]`;

suite(`Steam-style logins: the attacks from the field fail${missing}`, () => {
  let steam: SteamLikeProvider;
  let attacker: AttackerProvider;
  let t: TestApp;
  let userWrites: number;
  let checksBefore: number;
  beforeAll(async () => {
    [steam, attacker] = await Promise.all([startSteamLikeProvider(), startAttackerProvider()]);
  });
  afterAll(() => Promise.all([steam?.close(), attacker?.close()]));
  beforeEach(async () => {
    // The attacker is signed in at Steam as themselves.
    await steam.configure({ steamId: ATTACKER_STEAM_ID });
    t = await createTestApp({ providers: [{ name: 'Steam', identifier: steam.identifier }] });
    userWrites = 0;
    const findOrCreate = t.storage.users.findOrCreate.bind(t.storage.users);
    t.storage.users.findOrCreate = (...args) => (userWrites++, findOrCreate(...args));
    checksBefore = (await steam.stats()).check_authentication ?? 0;
  });
  afterEach(() => t.close());

  /** The attacker's browser begins a login at Steam here: what our server asked Steam for. */
  async function begin() {
    const redirect = new URL(await startLogin(t, t.agent, 'Steam'));
    expect(redirect.origin + redirect.pathname).toBe(steam.endpoint);
    return {
      redirect,
      returnTo: redirect.searchParams.get('openid.return_to')!,
      realm: redirect.searchParams.get('openid.realm')!,
    };
  }

  const checksSince = async () => ((await steam.stats()).check_authentication ?? 0) - checksBefore;

  /** Refused with `message`; no user written, not signed in, so no code and no token. */
  async function expectRefused(res: supertest.Response, message: string) {
    expectRefusalPage(res, message);
    expect(userWrites).toBe(0);
    const again = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(again.status).toBe(200);
    expect(again.text).toContain('Steam');
    expect(again.text).not.toContain('Do you trust');
  }

  it('logs the attacker in as themselves through the Steam-like provider (the control)', async () => {
    const { redirect } = await begin();
    expect(redirect.searchParams.get('openid.claimed_id')).toBe(IDENTIFIER_SELECT);
    const callback = await approveAtProvider(redirect.href);
    expect(callback.searchParams.get('openid.claimed_id')).toBe(steam.claimedId(ATTACKER_STEAM_ID));
    expect(callback.searchParams.get('openid.op_endpoint')).toBe(steam.endpoint);
    expect([...callback.searchParams.keys()].filter((k) => /^openid\.(ns\.|sreg|ax)/.test(k))).toEqual([]);
    const consent = await deliverCallback(t.agent, pathOf(callback.href));
    expect(consent.status, consent.text).toBe(200);
    const done = await answerConsent(t, consent.text, 'allow');
    const tokens = await exchangeCode(t, redirectParams(done.headers.location!).code!);
    expect(tokens.status, tokens.text).toBe(200);
    expect(await checksSince()).toBe(1);
    const stats = await steam.stats();
    expect(stats.associate ?? 0).toBe(0);
    expect(userWrites).toBe(1);
  });

  it("(a) the attacker's server as op_endpoint, asserting a victim's Steam id (omniauth-steam #24, social-core #538, goth #595): guarded by the op_endpoint comparison", async () => {
    const { returnTo, realm } = await begin();
    const victim = steam.claimedId(VICTIM_STEAM_ID);
    const callback = await attacker.mint({ returnTo, realm, claimedId: victim, identity: victim });
    expect(callback.searchParams.get('openid.op_endpoint')).toBe(attacker.endpoint);
    const res = await t.agent.get(pathOf(callback.href));
    await expectRefused(res, 'The login response comes from an unexpected provider endpoint.');
    expect(await attacker.contacted()).toBe(0);
    expect(await checksSince()).toBe(0);
  });

  it("(b) a claimed_id on the attacker's host, identity on Steam, signed by Steam (passport-steam #120): guarded by the claimed id's origin check", async () => {
    // The attacker's page names Steam as its provider with the attacker's own Steam identity as
    // local id, a delegation Steam signs; its path ends in the victim's SteamID.
    const page = await attacker.delegatingPage(
      VICTIM_STEAM_ID,
      steam.endpoint,
      steam.claimedId(ATTACKER_STEAM_ID),
    );
    const { redirect } = await begin();
    const request = new URL(redirect);
    request.searchParams.set('openid.claimed_id', page);
    request.searchParams.set('openid.identity', steam.claimedId(ATTACKER_STEAM_ID));
    const callback = await approveAtProvider(request.href);
    expect(callback.searchParams.get('openid.claimed_id')).toBe(page);
    expect(callback.searchParams.get('openid.op_endpoint')).toBe(steam.endpoint);
    const res = await t.agent.get(pathOf(callback.href));
    await expectRefused(res, 'The provider asserted an identifier it is not trusted for.');
    expect(await attacker.contacted()).toBe(0);
    expect(await checksSince()).toBe(0);
  });

  it("(c) a victim's assertion minted for another site's return_to, replayed here (passport-steam #92): guarded by the return_to comparison", async () => {
    const { returnTo } = await begin();
    // The victim signs in at another site (which the attacker runs); Steam signs for its return_to.
    await steam.configure({ steamId: VICTIM_STEAM_ID });
    const other = new URL(steam.endpoint);
    for (const [key, value] of Object.entries({
      ns: 'http://specs.openid.net/auth/2.0',
      mode: 'checkid_setup',
      claimed_id: IDENTIFIER_SELECT,
      identity: IDENTIFIER_SELECT,
      return_to: 'http://127.0.0.1:9/other-site/login',
      realm: 'http://127.0.0.1:9/',
    }))
      other.searchParams.set(`openid.${key}`, value);
    const minted = await approveAtProvider(other.href);
    expect(minted.searchParams.get('openid.claimed_id')).toBe(steam.claimedId(VICTIM_STEAM_ID));
    // ... and the attacker delivers it to our callback, in their own login.
    const replayed = new URL(returnTo);
    for (const [key, value] of minted.searchParams)
      if (key.startsWith('openid.')) replayed.searchParams.set(key, value);
    const res = await t.agent.get(pathOf(replayed.href));
    await expectRefused(res, 'The login response was not meant for this login.');
    expect(await checksSince()).toBe(0);
  });

  describe('(d) openid.ns unchecked, unsigned fields trusted', () => {
    it('an OpenID 1.1 namespace on a genuine assertion: guarded by the openid.ns check', async () => {
      const callback = await approveAtProvider((await begin()).redirect.href);
      callback.searchParams.set('openid.ns', 'http://openid.net/signon/1.1');
      const res = await t.agent.get(pathOf(callback.href));
      await expectRefused(res, 'The login response is not an OpenID 2.0 response.');
      expect(await checksSince()).toBe(0);
    });

    it('unsigned claimed_id and identity of the victim on a genuine extension-only assertion: guarded by the signed-list check', async () => {
      // A request without identifiers (section 9.1) is answered with a signed assertion that
      // names nobody; the attacker appends the victim's identifiers, unsigned.
      const { redirect } = await begin();
      const request = new URL(redirect);
      request.searchParams.delete('openid.claimed_id');
      request.searchParams.delete('openid.identity');
      const callback = await approveAtProvider(request.href);
      expect(callback.searchParams.get('openid.mode')).toBe('id_res');
      expect(callback.searchParams.has('openid.claimed_id')).toBe(false);
      const victim = steam.claimedId(VICTIM_STEAM_ID);
      callback.searchParams.set('openid.claimed_id', victim);
      callback.searchParams.set('openid.identity', victim);
      const res = await t.agent.get(pathOf(callback.href));
      await expectRefused(res, 'The login response leaves a required field unsigned.');
      expect(await checksSince()).toBe(0);
    });

    it('a second, unsigned claimed_id of the victim after the genuine one: guarded by the repeated-field check', async () => {
      const callback = await approveAtProvider((await begin()).redirect.href);
      const victim = steam.claimedId(VICTIM_STEAM_ID);
      callback.searchParams.append('openid.claimed_id', victim);
      callback.searchParams.append('openid.identity', victim);
      const res = await t.agent.get(pathOf(callback.href));
      await expectRefused(res, 'The login response repeats a field.');
      expect(await checksSince()).toBe(0);
    });

    it("the victim's claimed_id under a field name with a NUL byte (passport-steam #127): guarded by the field-name check", async () => {
      const callback = await approveAtProvider((await begin()).redirect.href);
      const victim = steam.claimedId(VICTIM_STEAM_ID);
      callback.searchParams.append('openid.claimed_id\u0000', victim);
      callback.searchParams.append('openid.identity\u0000', victim);
      const res = await t.agent.get(pathOf(callback.href));
      await expectRefused(res, 'The login response has a malformed field name.');
      expect(await checksSince()).toBe(0);
    });
  });
});
