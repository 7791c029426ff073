import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDENTIFIER_SELECT, OPENID2_NS } from '../../../src/login/openid/constants.js';
import { RelyingParty } from '../../../src/login/openid/relying-party.js';
import {
  startDevelopmentProvider,
  type RunningDevelopmentProvider,
} from '../../../src/testing/provider/index.js';
import {
  createRelyingParty,
  expectLoginError,
  loginAtProvider,
  memoryNonces,
  RETURN_TO,
  RP_BASE,
} from '../../support/openid-harness.js';

let op: RunningDevelopmentProvider;
beforeAll(async () => {
  op = await startDevelopmentProvider({ users: ['alice', 'bob'] });
});
afterAll(() => op.close());

describe('RelyingParty login through the development provider', () => {
  it('logs alice in: begin, provider form, callback, verified identity', async () => {
    const nonces = memoryNonces();
    const rp = createRelyingParty(op, { nonces });
    const { redirectUrl, state } = await rp.begin(rp.findProvider(op.identifier)!);
    const callback = await loginAtProvider(redirectUrl, 'alice');
    const identity = await rp.verify(callback, state);
    expect(identity).toEqual({
      provider: 'Development',
      identifier: op.userUrl('alice'),
      opEndpoint: op.endpoint,
      accountKey: op.userUrl('alice'),
    });
    // The login state's claim and the response nonce.
    expect(nonces.size()).toBe(2);
  });

  it('sends a stateless identifier_select checkid_setup with a per-login rp_nonce and no extensions', async () => {
    const rp = createRelyingParty(op);
    const first = await rp.begin(rp.findProvider('Development')!);
    const second = await rp.begin(rp.findProvider('Development')!);
    const url = new URL(first.redirectUrl);
    expect(`${url.origin}${url.pathname}`).toBe(op.endpoint);
    const params = Object.fromEntries(url.searchParams);
    const returnTo = new URL(params['openid.return_to']!);
    expect(params).toEqual({
      'openid.ns': OPENID2_NS,
      'openid.mode': 'checkid_setup',
      'openid.claimed_id': IDENTIFIER_SELECT,
      'openid.identity': IDENTIFIER_SELECT,
      'openid.return_to': returnTo.href,
      'openid.realm': `${RP_BASE}/`,
    });
    expect(`${returnTo.origin}${returnTo.pathname}`).toBe(RETURN_TO);
    expect(returnTo.searchParams.get('rp_nonce')).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(first.state).toMatchObject({
      provider: 'Development',
      opEndpoint: op.endpoint,
      returnTo: returnTo.href,
    });
    expect(second.state.returnTo).not.toBe(first.state.returnTo);
    expect(JSON.parse(JSON.stringify(first.state))).toEqual(first.state);
  });

  it('supports a provider configured by a claimed identifier (signon service with LocalID)', async () => {
    const rp = createRelyingParty(op, { providers: [{ name: 'Bob only', identifier: op.userUrl('bob') }] });
    const { redirectUrl, state } = await rp.begin(rp.findProvider('Bob only')!);
    const sent = new URL(redirectUrl).searchParams;
    expect(sent.get('openid.claimed_id')).toBe(op.userUrl('bob'));
    expect(sent.get('openid.identity')).toBe(op.userUrl('bob'));
    const identity = await rp.verify(await loginAtProvider(redirectUrl, 'bob'), state);
    expect(identity.identifier).toBe(op.userUrl('bob'));
  });

  it('reports a cancel at the provider as cancelled', async () => {
    const rp = createRelyingParty(op);
    const { redirectUrl, state } = await rp.begin(rp.findProvider('Development')!);
    const callback = await loginAtProvider(redirectUrl, 'alice', 'cancel');
    expect(callback.searchParams.get('openid.mode')).toBe('cancel');
    await expectLoginError(rp.verify(callback, state), 'cancelled');
  });

  it('matches providers exactly by identifier or name, nothing else', () => {
    const rp = createRelyingParty(op);
    expect(rp.findProvider('Development')?.identifier).toBe(op.identifier);
    expect(rp.findProvider(op.identifier)?.name).toBe('Development');
    for (const near of [
      'development',
      op.url,
      `${op.identifier}#x`,
      ` ${op.identifier}`,
      'http://evil.test/',
    ]) {
      expect(rp.findProvider(near)).toBeUndefined();
    }
  });

  it('refuses to begin at a provider that is not on the allow-list, without fetching it', async () => {
    const rp = createRelyingParty(op);
    await expectLoginError(
      rp.begin({ name: 'Development', identifier: 'http://127.0.0.1:9/' }),
      'unknown_provider',
    );
    await expectLoginError(rp.begin({ name: 'Other', identifier: op.identifier }), 'unknown_provider');
  });

  it('refuses a callback whose login state names a provider no longer configured', async () => {
    const rp = createRelyingParty(op);
    const { redirectUrl, state } = await rp.begin(rp.findProvider('Development')!);
    const callback = await loginAtProvider(redirectUrl, 'alice');
    await expectLoginError(rp.verify(callback, { ...state, provider: 'Gone' }), 'unknown_provider');
  });

  it('validates options up front, naming the option', () => {
    const base = { returnTo: RETURN_TO, realm: `${RP_BASE}/`, nonces: memoryNonces(), clock: Date.now };
    const bad: [Partial<ConstructorParameters<typeof RelyingParty>[0]>, RegExp][] = [
      [{ providers: [] }, /providers/],
      [{ providers: [{ name: 'X', identifier: '=example' }] }, /providers\.0\.identifier/],
      [{ providers: [{ name: 'X', identifier: 'xri://=example' }] }, /providers\.0\.identifier/],
      [{ providers: [{ name: 'X', identifier: op.identifier }], realm: 'http://other.test/' }, /realm/],
    ];
    for (const [override, message] of bad) {
      expect(() => new RelyingParty({ providers: [], ...base, ...override })).toThrow(message);
    }
  });
});
