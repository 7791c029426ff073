/**
 * Issue 20: the `steam()` preset against the Steam-like provider (test/support/steam-like-provider.py
 * on python3-openid, real HTTP on 127.0.0.1), through the authorization server up to a token. The
 * hostile variants are assertions the provider signs and discovery confirms: only the preset's
 * checks stand between them and a login, which each control (the same assertion with a plain
 * `{ name, identifier }` provider) shows.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IDENTIFIER_SELECT } from '../../../src/login/openid/constants.js';
import { openid, steam } from '../../../src/login/openid/presets.js';
import { createTestApp } from '../../support/app.js';
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
import {
  ATTACKER_STEAM_ID,
  startSteamLikeProvider,
  VICTIM_STEAM_ID,
  type SteamLikeProvider,
} from '../../support/steam-like-provider.js';

const python = pythonOpenIdAvailability();
const suite = python.ok ? describe : describe.skip;
const missing = python.ok ? '' : ` [NOT RUN: ${python.reason}]`;

suite(`steam() preset against the Steam-like provider${missing}`, () => {
  let fixture: SteamLikeProvider;
  let t: PresetApp | undefined;
  beforeAll(async () => {
    fixture = await startSteamLikeProvider();
  });
  afterAll(() => fixture?.close());
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const checks = async () => (await fixture.stats()).check_authentication ?? 0;

  it('logs in with identifier select up to a token; the account key is the SteamID64; no sreg asked, no display name', async () => {
    await fixture.configure({ steamId: VICTIM_STEAM_ID });
    t = await createPresetApp([steam({ baseUrl: fixture.url })]);
    const request = await beginAt(t, 'Steam');
    expect(request.origin + request.pathname).toBe(fixture.endpoint);
    expect(request.searchParams.get('openid.claimed_id')).toBe(IDENTIFIER_SELECT);
    expect([...request.searchParams.keys()].filter((k) => /^openid\.(ns\.|sreg|ax)/.test(k))).toEqual([]);
    const callback = await answeredBy(request);
    await finishToToken(t, callback);
    expect(t.verified).toEqual([
      {
        provider: 'Steam',
        identifier: fixture.claimedId(VICTIM_STEAM_ID),
        opEndpoint: fixture.endpoint,
        accountKey: VICTIM_STEAM_ID,
        claims: { steam_id: VICTIM_STEAM_ID },
      },
    ]);
    expect(t.userWrites()).toBe(1);
  });

  it("is accepted as it is by the server's providers option and logs in there up to a token", async () => {
    await fixture.configure();
    const app = await createTestApp({ providers: [steam({ baseUrl: fixture.url })] });
    try {
      await finishToToken(app, await answeredBy(await beginAt(app, 'Steam')));
    } finally {
      await app.close();
    }
  });

  describe('a claimed id Steam never issues, signed by the provider and confirmed by discovery, is refused', () => {
    for (const [what, steamId] of [
      ['16 digits', '7656119796043553'],
      ['18 digits', '765611979604355300'],
      ['letters', 'gaben'],
    ] as const) {
      it(`${what}: refused by the claimed-id pattern before anything is fetched`, async () => {
        await fixture.configure({ steamId, offPatternIds: true });
        t = await createPresetApp([steam({ baseUrl: fixture.url })]);
        const callback = await answeredBy(await beginAt(t, 'Steam'));
        expect(callback.searchParams.get('openid.claimed_id')).toBe(fixture.claimedId(steamId));
        const before = await checks();
        await expectLoginRefused(t, callback, 'The provider asserted an identifier it does not issue.');
        expect(await checks()).toBe(before);
      });
    }

    it('the control: the same assertion logs in through a plain { name, identifier } provider', async () => {
      await fixture.configure({ steamId: '7656119796043553', offPatternIds: true });
      t = await createPresetApp([{ name: 'Steam', identifier: fixture.identifier }]);
      await finishToToken(t, await answeredBy(await beginAt(t, 'Steam')));
      expect(t.verified).toMatchObject([
        {
          identifier: fixture.claimedId('7656119796043553'),
          accountKey: fixture.claimedId('7656119796043553'),
        },
      ]);
    });
  });

  it('a genuine claimed id with a fragment is refused by the pattern (the whole id must match)', async () => {
    await fixture.configure({ steamId: ATTACKER_STEAM_ID });
    t = await createPresetApp([steam({ baseUrl: fixture.url })]);
    const request = await beginAt(t, 'Steam');
    // The relying party asked for a specific identity (section 9.1); the provider answers for
    // its user only, so the attacker asks for their own id spelled with a fragment.
    request.searchParams.set('openid.claimed_id', `${fixture.claimedId(ATTACKER_STEAM_ID)}#1`);
    request.searchParams.set('openid.identity', fixture.claimedId(ATTACKER_STEAM_ID));
    const callback = await answeredBy(request);
    expect(callback.searchParams.get('openid.claimed_id')).toBe(`${fixture.claimedId(ATTACKER_STEAM_ID)}#1`);
    await expectLoginRefused(t, callback, 'The provider asserted an identifier it does not issue.');
  });

  it('an endpoint the preset does not list is not followed: refused at the start, the provider never asked', async () => {
    await fixture.configure();
    t = await createPresetApp([
      openid({
        name: 'Steam',
        identifier: fixture.identifier,
        endpointPattern: new RegExp(`${fixture.url.replace(/[.:/]/g, '\\$&')}/openid/auth`),
      }),
    ]);
    const before = (await fixture.stats()).checkid_setup ?? 0;
    const selection = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(selection.status).toBe(200);
    const res = await t.agent.get('/oauth/login').query({ openid_identifier: fixture.identifier });
    expectRefusalPage(res, 'Steam does not offer OpenID 2.0 login at its known endpoint.', {
      status: 502,
      retry: false,
    });
    expect((await fixture.stats()).checkid_setup ?? 0).toBe(before);
  });

  it('the same provider with the endpoint it does name listed logs in (the control)', async () => {
    await fixture.configure();
    t = await createPresetApp([
      openid({ name: 'Steam', identifier: fixture.identifier, endpointPattern: fixture.endpoint }),
    ]);
    await finishToToken(t, await answeredBy(await beginAt(t, 'Steam')));
    expect(t.verified).toMatchObject([{ accountKey: fixture.claimedId(ATTACKER_STEAM_ID) }]);
  });
});
