/**
 * Issue 20: the `launchpad()` and `ubuntuOne()` presets, each against its own Launchpad-like
 * provider (test/support/launchpad-like-provider.py on python3-openid, real HTTP on 127.0.0.1),
 * through the authorization server up to a token. The sreg values kept are the signed ones only.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IDENTIFIER_SELECT } from '../../../src/login/openid/constants.js';
import { SREG_NS } from '../../../src/login/openid/sreg.js';
import { launchpad, ubuntuOne } from '../../../src/login/openid/presets.js';
import {
  DEFAULT_LAUNCHPAD_USER,
  startLaunchpadLikeProvider,
  type LaunchpadLikeProvider,
} from '../../support/launchpad-like-provider.js';
import { codeQuery, expectRefusalPage } from '../../support/python-flow.js';
import { pythonOpenIdAvailability } from '../../support/python-openid.js';
import {
  answeredBy,
  beginAt,
  createPresetApp,
  expectLoginRefused,
  finishToToken,
  type PresetApp,
} from '../../support/preset-app.js';

const python = pythonOpenIdAvailability();
const suite = python.ok ? describe : describe.skip;
const missing = python.ok ? '' : ` [NOT RUN: ${python.reason}]`;

suite(`launchpad() and ubuntuOne() presets against Launchpad-like providers${missing}`, () => {
  let lp: LaunchpadLikeProvider;
  let u1: LaunchpadLikeProvider;
  let t: PresetApp | undefined;
  beforeAll(async () => {
    [lp, u1] = await Promise.all([startLaunchpadLikeProvider(), startLaunchpadLikeProvider()]);
  });
  afterAll(() => Promise.all([lp?.close(), u1?.close()]));
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const both = () => [launchpad({ baseUrl: lp.url }), ubuntuOne({ baseUrl: u1.url })];
  const checks = async (p: LaunchpadLikeProvider) => (await p.stats()).check_authentication ?? 0;

  for (const [name, fixture] of [
    ['Launchpad', () => lp],
    ['Ubuntu One', () => u1],
  ] as const) {
    it(`${name}: identifier select with sreg nickname,fullname optional, up to a token; key = the account id, display name = the signed fullname`, async () => {
      const op = fixture();
      await Promise.all([lp.configure(), u1.configure()]);
      t = await createPresetApp(both());
      const request = await beginAt(t, name);
      expect(request.origin + request.pathname).toBe(op.endpoint);
      expect(request.searchParams.get('openid.claimed_id')).toBe(IDENTIFIER_SELECT);
      expect(request.searchParams.get('openid.ns.sreg')).toBe(SREG_NS);
      expect(request.searchParams.get('openid.sreg.optional')).toBe('nickname,fullname');
      expect(request.searchParams.has('openid.sreg.required')).toBe(false);
      const callback = await answeredBy(request);
      expect(callback.searchParams.get('openid.signed')!.split(',')).toEqual(
        expect.arrayContaining(['ns.sreg', 'sreg.nickname', 'sreg.fullname']),
      );
      await finishToToken(t, callback);
      expect(t.verified).toEqual([
        {
          provider: name,
          identifier: op.claimedId(DEFAULT_LAUNCHPAD_USER.userId),
          opEndpoint: op.endpoint,
          accountKey: DEFAULT_LAUNCHPAD_USER.userId,
          displayName: 'Alice Liddell',
          attributes: { nickname: 'alice', fullname: 'Alice Liddell' },
          claims: { preferred_username: 'alice', name: 'Alice Liddell' },
        },
      ]);
      expect((await op.stats()).associate ?? 0).toBe(0);
    });
  }

  it('an account without a full name is shown by its signed nickname', async () => {
    await lp.configure({ userId: 'Zz9Yy8X', fullname: null, nickname: 'bob' });
    t = await createPresetApp(both());
    await finishToToken(t, await answeredBy(await beginAt(t, 'Launchpad')));
    expect(t.verified).toMatchObject([
      { accountKey: 'Zz9Yy8X', displayName: 'bob', attributes: { nickname: 'bob' } },
    ]);
    expect(t.verified[0]!.attributes).not.toHaveProperty('fullname');
  });

  describe('unsigned sreg values are dropped, never shown', () => {
    it('values the provider appends after signing (outside openid.signed) are dropped; the login itself succeeds', async () => {
      await lp.configure({ unsignedSreg: true });
      t = await createPresetApp(both());
      const callback = await answeredBy(await beginAt(t, 'Launchpad'));
      expect(callback.searchParams.get('openid.sreg.fullname')).toBe('Alice Liddell');
      expect(callback.searchParams.get('openid.signed')).not.toMatch(/sreg/);
      const { consentPage } = await finishToToken(t, callback);
      expect(t.verified).toEqual([
        {
          provider: 'Launchpad',
          identifier: lp.claimedId(DEFAULT_LAUNCHPAD_USER.userId),
          opEndpoint: lp.endpoint,
          accountKey: DEFAULT_LAUNCHPAD_USER.userId,
        },
      ]);
      expect(consentPage).not.toContain('Alice Liddell');
    });

    it('a fullname the browser adds to a genuine assertion is dropped; the signed nickname is shown', async () => {
      await lp.configure({ fullname: null, nickname: 'mallory' });
      t = await createPresetApp(both());
      const callback = await answeredBy(await beginAt(t, 'Launchpad'));
      callback.searchParams.set('openid.sreg.fullname', 'Site Administrator');
      const { consentPage } = await finishToToken(t, callback);
      expect(t.verified).toMatchObject([{ displayName: 'mallory', attributes: { nickname: 'mallory' } }]);
      expect(t.verified[0]!.attributes).not.toHaveProperty('fullname');
      expect(consentPage).not.toContain('Site Administrator');
    });

    it('a second sreg alias the browser declares (sreg 1.0), unsigned, with its own values, is ignored', async () => {
      await lp.configure({ fullname: null, nickname: 'mallory' });
      t = await createPresetApp(both());
      const callback = await answeredBy(await beginAt(t, 'Launchpad'));
      // The 1.1 namespace twice would not even parse at the provider (python3-openid refuses it).
      callback.searchParams.set('openid.ns.x', 'http://openid.net/sreg/1.0');
      callback.searchParams.set('openid.x.fullname', 'Site Administrator');
      callback.searchParams.set('openid.x.nickname', 'admin');
      await finishToToken(t, callback);
      expect(t.verified).toMatchObject([{ displayName: 'mallory', attributes: { nickname: 'mallory' } }]);
    });
  });

  it('a claimed id on another path (/~id), signed and confirmed by discovery, is refused before anything is fetched', async () => {
    await lp.configure({ claimedIdPath: '/~' });
    t = await createPresetApp(both());
    const callback = await answeredBy(await beginAt(t, 'Launchpad'));
    expect(callback.searchParams.get('openid.claimed_id')).toBe(
      `${lp.url}/~${DEFAULT_LAUNCHPAD_USER.userId}`,
    );
    const before = await checks(lp);
    await expectLoginRefused(t, callback, 'The provider asserted an identifier it does not issue.');
    expect(await checks(lp)).toBe(before);
  });

  it("a Launchpad id asserted through Ubuntu One's login (another host) is refused", async () => {
    // The Ubuntu One stand-in signs a claimed id at the Launchpad stand-in's address.
    await Promise.all([lp.configure(), u1.configure()]);
    t = await createPresetApp(both());
    const request = await beginAt(t, 'Ubuntu One');
    request.searchParams.set('openid.claimed_id', lp.claimedId(DEFAULT_LAUNCHPAD_USER.userId));
    request.searchParams.set('openid.identity', u1.claimedId(DEFAULT_LAUNCHPAD_USER.userId));
    const callback = await answeredBy(request);
    expect(callback.searchParams.get('openid.claimed_id')).toBe(lp.claimedId(DEFAULT_LAUNCHPAD_USER.userId));
    await expectLoginRefused(t, callback, 'The provider asserted an identifier it is not trusted for.');
  });

  it('an OP Identifier document naming another endpoint at the same host is not followed', async () => {
    await lp.configure({ identifierEndpointPath: '/+openid-legacy' });
    t = await createPresetApp(both());
    const before = (await lp.stats()).checkid_setup ?? 0;
    expect((await t.agent.get('/oauth/authorize').query(codeQuery)).status).toBe(200);
    const res = await t.agent.get('/oauth/login').query({ openid_identifier: lp.identifier });
    expectRefusalPage(res, 'Launchpad does not offer OpenID 2.0 login at its known endpoint.', {
      status: 502,
      retry: false,
    });
    expect((await lp.stats()).checkid_setup ?? 0).toBe(before);
  });

  it('the control: a plain { name, identifier } provider follows that endpoint and asks for no sreg', async () => {
    await lp.configure({ identifierEndpointPath: '/+openid-legacy' });
    t = await createPresetApp([{ name: 'Launchpad', identifier: lp.identifier }]);
    const request = await beginAt(t, 'Launchpad');
    expect(request.origin + request.pathname).toBe(`${lp.url}/+openid-legacy`);
    expect(request.searchParams.has('openid.ns.sreg')).toBe(false);
  });
});
