/**
 * Issue 20: what each preset says about its provider (identifier, endpoints, claimed-id pattern,
 * sreg, account key), how the relying party validates preset fields, and the signed-only reading
 * of sreg values. No network: the logins themselves are in steam.login and launchpad.login.
 */
import { describe, expect, it } from 'vitest';
import type { AuthorizationServerOptions } from '../../../src/index.js';
import { OpenIdLoginError } from '../../../src/login/openid/errors.js';
import { launchpad, openid, steam, ubuntuOne } from '../../../src/login/openid/presets.js';
import {
  accountOf,
  allowsClaimedId,
  allowsEndpoint,
  type ProviderPreset,
  type VerifiedAssertion,
} from '../../../src/login/openid/provider-policy.js';
import { RelyingParty } from '../../../src/login/openid/relying-party.js';
import { signedSregValues, SREG_NS } from '../../../src/login/openid/sreg.js';
import { memoryNonces } from '../../support/openid-harness.js';

const STEAM_ID = '76561197960435530';

function verified(provider: ProviderPreset, identifier: string, attributes = {}): VerifiedAssertion {
  return { provider: provider.name, identifier, opEndpoint: provider.identifier, attributes };
}

function relyingParty(providers: readonly unknown[]): RelyingParty {
  return new RelyingParty({
    providers: providers as ProviderPreset[],
    returnTo: 'http://127.0.0.1:3999/oauth/login/callback',
    realm: 'http://127.0.0.1:3999/',
    nonces: memoryNonces(),
    clock: Date.now,
  });
}

describe('steam()', () => {
  const preset = steam();

  it("names Steam's OP identifier and its one endpoint, asks for no sreg", () => {
    expect(preset).toMatchObject({
      name: 'Steam',
      identifier: 'https://steamcommunity.com/openid',
      endpoints: ['https://steamcommunity.com/openid/login'],
    });
    expect(preset.sreg).toBeUndefined();
    expect(preset.icon).toMatch(/^data:image\/svg\+xml,/);
    expect(allowsEndpoint(preset, 'https://steamcommunity.com/openid/login')).toBe(true);
    expect(allowsEndpoint(preset, 'https://steamcommunity.com/openid/login2')).toBe(false);
    expect(allowsEndpoint(preset, 'http://steamcommunity.com/openid/login')).toBe(false);
  });

  it('accepts exactly https://steamcommunity.com/openid/id/<17 digits>; the key is the SteamID64', () => {
    const id = `https://steamcommunity.com/openid/id/${STEAM_ID}`;
    expect(allowsClaimedId(preset, id)).toBe(true);
    expect(accountOf(preset, verified(preset, id))).toEqual({
      key: STEAM_ID,
      claims: { steam_id: STEAM_ID },
    });
    for (const other of [
      `https://steamcommunity.com/openid/id/${STEAM_ID.slice(1)}`,
      `https://steamcommunity.com/openid/id/${STEAM_ID}0`,
      'https://steamcommunity.com/openid/id/gaben',
      `https://steamcommunity.com/openid/id/${STEAM_ID}/`,
      `https://steamcommunity.com/openid/id/${STEAM_ID}#1`,
      `https://steamcommunity.com/openid/id/${STEAM_ID}?x=1`,
      `http://steamcommunity.com/openid/id/${STEAM_ID}`,
      `https://steamcommunity.com.evil.example/openid/id/${STEAM_ID}`,
      `https://evil.example/https://steamcommunity.com/openid/id/${STEAM_ID}`,
      `https://steamcommunity.com/openid/id/${STEAM_ID}\n`,
    ]) {
      expect(allowsClaimedId(preset, other), other).toBe(false);
    }
  });

  it('takes a base URL and a name for tests', () => {
    const local = steam({ baseUrl: 'http://127.0.0.1:4100', name: 'Local Steam' });
    expect(local).toMatchObject({
      name: 'Local Steam',
      identifier: 'http://127.0.0.1:4100/openid',
      endpoints: ['http://127.0.0.1:4100/openid/login'],
    });
    expect(allowsClaimedId(local, `http://127.0.0.1:4100/openid/id/${STEAM_ID}`)).toBe(true);
    expect(allowsClaimedId(local, `https://steamcommunity.com/openid/id/${STEAM_ID}`)).toBe(false);
    expect(allowsClaimedId(local, `http://127.0.0.1:41000/openid/id/${STEAM_ID}`)).toBe(false);
  });

  it.each([
    'http://steam.example',
    'http://127.0.0.1:4100/openid',
    'http://127.0.0.1:4100/?x=1',
    'ftp://127.0.0.1/',
    'not a url',
  ])('refuses the base URL %s (an https origin, or http on a loopback host)', (baseUrl) => {
    expect(() => steam({ baseUrl })).toThrow(TypeError);
  });
});

describe('launchpad() and ubuntuOne()', () => {
  it.each([
    [launchpad(), 'Launchpad', 'https://login.launchpad.net'],
    [ubuntuOne(), 'Ubuntu One', 'https://login.ubuntu.com'],
  ])(
    '%#: %s at %s: endpoint /+openid, claimed ids /+id/<7 letters or digits>, sreg nickname and fullname',
    (preset, name, base) => {
      expect(preset).toMatchObject({
        name,
        identifier: `${base}/`,
        endpoints: [`${base}/+openid`],
        sreg: ['nickname', 'fullname'],
      });
      expect(allowsClaimedId(preset, `${base}/+id/Ab3dE7q`)).toBe(true);
      for (const other of [
        `${base}/+id/Ab3dE7`,
        `${base}/+id/Ab3dE7qX`,
        `${base}/+id/Ab3-E7q`,
        `${base}/~Ab3dE7q`,
        `${base}/+id/Ab3dE7q/`,
        `${base}/+idXAb3dE7q`,
        base === 'https://login.ubuntu.com'
          ? 'https://login.launchpad.net/+id/Ab3dE7q'
          : 'https://login.ubuntu.com/+id/Ab3dE7q',
      ]) {
        expect(allowsClaimedId(preset, other), other).toBe(false);
      }
    },
  );

  it('keys the account by its id and names it by the signed fullname, else the nickname, else nothing', () => {
    const preset = launchpad();
    const id = 'https://login.launchpad.net/+id/Ab3dE7q';
    expect(accountOf(preset, verified(preset, id, { nickname: 'alice', fullname: ' Alice ' }))).toEqual({
      key: 'Ab3dE7q',
      displayName: 'Alice',
      claims: { preferred_username: 'alice', name: 'Alice' },
    });
    expect(accountOf(preset, verified(preset, id, { nickname: 'alice', fullname: '  ' }))).toEqual({
      key: 'Ab3dE7q',
      displayName: 'alice',
      claims: { preferred_username: 'alice' },
    });
    expect(accountOf(preset, verified(preset, id))).toEqual({ key: 'Ab3dE7q' });
  });
});

describe('openid()', () => {
  it('takes an endpoint URL, pattern or list, a claimed-id pattern, sreg; the key is the claimed id', () => {
    const preset = openid({
      name: 'Example',
      identifier: 'https://id.example/',
      endpointPattern: [/https:\/\/id\.example\/openid\/(auth|login)/, 'https://id.example/server'],
      claimedIdPattern: /https:\/\/id\.example\/user\/[a-z]+/,
      sreg: ['nickname'],
    });
    expect(allowsEndpoint(preset, 'https://id.example/openid/auth')).toBe(true);
    expect(allowsEndpoint(preset, 'https://id.example/server')).toBe(true);
    // Patterns match the whole URL, anchored or not.
    expect(allowsEndpoint(preset, 'https://id.example/openid/auth/x')).toBe(false);
    expect(allowsClaimedId(preset, 'https://id.example/user/alice')).toBe(true);
    expect(allowsClaimedId(preset, 'https://id.example/user/alice/../admin')).toBe(false);
    const id = 'https://id.example/user/alice';
    expect(accountOf(preset, verified(preset, id, { nickname: 'al' }))).toEqual({
      key: id,
      displayName: 'al',
      claims: { preferred_username: 'al' },
    });
  });

  it('without patterns adds no check', () => {
    const preset = openid({ name: 'Example', identifier: 'https://id.example/' });
    expect(allowsEndpoint(preset, 'https://id.example/anything')).toBe(true);
    expect(allowsClaimedId(preset, 'https://id.example/anyone')).toBe(true);
  });
});

describe('the relying party with presets', () => {
  it('keeps the preset fields (findProvider returns them) and accepts presets beside plain providers', () => {
    const rp = relyingParty([steam(), launchpad(), { name: 'Dev', identifier: 'http://127.0.0.1:4000/' }]);
    expect(rp.findProvider('Steam')).toMatchObject({
      endpoints: ['https://steamcommunity.com/openid/login'],
    });
    expect(rp.findProvider('Launchpad')?.sreg).toEqual(['nickname', 'fullname']);
    expect(rp.findProvider('Dev')).toEqual({ name: 'Dev', identifier: 'http://127.0.0.1:4000/' });
  });

  it.each([
    ['a pattern with the g flag', { claimedId: /x/g }, 'providers.0.claimedId'],
    [
      'an endpoint that is not an http(s) URL',
      { endpoints: ['javascript:alert(1)'] },
      'providers.0.endpoints',
    ],
    ['an empty endpoint list', { endpoints: [] }, 'providers.0.endpoints'],
    ['an http icon', { icon: 'http://icons.example/s.png' }, 'providers.0.icon'],
    ['a javascript: icon', { icon: 'javascript:alert(1)' }, 'providers.0.icon'],
    ['an sreg field it cannot ask for', { sreg: ['dob'] }, 'providers.0.sreg'],
    ['an sreg field twice', { sreg: ['nickname', 'nickname'] }, 'providers.0.sreg'],
    ['an account that is not a function', { account: 'steamid' }, 'providers.0.account'],
  ])('refuses %s, naming the option', (_what, fields, path) => {
    expect(() => relyingParty([{ ...steam(), ...fields }])).toThrow(`option ${path}`);
  });

  it('a preset whose account() gives no key is a configuration fault (TypeError), not a refused login', () => {
    const preset = { ...steam(), account: () => ({ key: '' }) };
    expect(() =>
      accountOf(preset, verified(preset, `https://steamcommunity.com/openid/id/${STEAM_ID}`)),
    ).toThrow(TypeError);
  });

  it('drops a display name that is too long or has control characters', () => {
    for (const displayName of ['x'.repeat(201), 'a\u0000b']) {
      const preset = { ...steam(), account: () => ({ key: 'k', displayName }) };
      expect(accountOf(preset, verified(preset, 'https://steamcommunity.com/'))).toEqual({ key: 'k' });
    }
  });

  it('refuses a login state whose endpoint the preset no longer allows (begun before it was configured), before reading the response', async () => {
    const rp = relyingParty([steam({ baseUrl: 'http://127.0.0.1:4100' })]);
    const promise = rp.verify(new URL('http://127.0.0.1:3999/oauth/login/callback'), {
      id: 'a'.repeat(22),
      provider: 'Steam',
      opEndpoint: 'http://127.0.0.1:4100/openid/other',
      returnTo: 'http://127.0.0.1:3999/oauth/login/callback?rp_nonce=x',
      startedAt: Date.now(),
    });
    await expect(promise).rejects.toThrow(OpenIdLoginError);
    await expect(promise).rejects.toMatchObject({
      kind: 'invalid_response',
      message: 'The login response comes from an unexpected provider endpoint.',
    });
  });

  it('presets are accepted where the server takes providers (type level)', () => {
    const providers: AuthorizationServerOptions['providers'] = [steam(), launchpad(), ubuntuOne()];
    expect(providers).toHaveLength(3);
  });
});

describe('signedSregValues', () => {
  const signed = (fields: Record<string, string>, signedList: string) =>
    new Map(Object.entries({ 'openid.signed': signedList, ...fields }));

  it('keeps the asked-for values the provider signed, under whatever alias it declared (signed)', () => {
    const message = signed(
      {
        'openid.ns.reg': SREG_NS,
        'openid.reg.nickname': 'alice',
        'openid.reg.fullname': 'Alice',
        'openid.reg.email': 'a@example.test',
      },
      'ns.reg,reg.nickname,reg.fullname,reg.email',
    );
    expect(signedSregValues(message, ['nickname', 'fullname'])).toEqual({
      nickname: 'alice',
      fullname: 'Alice',
    });
    expect(signedSregValues(message, [])).toEqual({});
  });

  it('accepts the sreg 1.0 namespace', () => {
    const message = signed(
      { 'openid.ns.sreg': 'http://openid.net/sreg/1.0', 'openid.sreg.nickname': 'alice' },
      'ns.sreg,sreg.nickname',
    );
    expect(signedSregValues(message, ['nickname'])).toEqual({ nickname: 'alice' });
  });

  it.each([
    ['the value unsigned', { 'openid.ns.sreg': SREG_NS, 'openid.sreg.nickname': 'alice' }, 'ns.sreg'],
    [
      'the namespace declaration unsigned',
      { 'openid.ns.sreg': SREG_NS, 'openid.sreg.nickname': 'alice' },
      'sreg.nickname',
    ],
    ['no namespace declaration', { 'openid.sreg.nickname': 'alice' }, 'sreg.nickname'],
    [
      'two signed aliases declaring sreg',
      {
        'openid.ns.sreg': SREG_NS,
        'openid.ns.x': SREG_NS,
        'openid.sreg.nickname': 'alice',
        'openid.x.nickname': 'admin',
      },
      'ns.sreg,ns.x,sreg.nickname,x.nickname',
    ],
    [
      'a control character',
      { 'openid.ns.sreg': SREG_NS, 'openid.sreg.nickname': 'al\nice' },
      'ns.sreg,sreg.nickname',
    ],
    [
      'over 1 KiB',
      { 'openid.ns.sreg': SREG_NS, 'openid.sreg.nickname': 'a'.repeat(1025) },
      'ns.sreg,sreg.nickname',
    ],
  ])('drops the value with %s', (_what, fields, signedList) => {
    expect(signedSregValues(signed(fields, signedList), ['nickname'])).toEqual({});
  });
});
