import { describe, expect, it } from 'vitest';
import { callbackMatchesReturnTo } from '../../../src/login/openid/check-assertion.js';
import { parseHtmlDiscovery } from '../../../src/login/openid/html-discovery.js';
import { encodeKeyValueForm, parseKeyValueForm } from '../../../src/login/openid/key-value-form.js';
import { returnToMatchesRealm } from '../../../src/login/openid/realm.js';
import { parseResponseNonce } from '../../../src/login/openid/response-nonce.js';
import { parseXrds } from '../../../src/login/openid/xrds.js';

describe('key-value form (section 4.1.1)', () => {
  it('round-trips and refuses malformed bodies', () => {
    const body = encodeKeyValueForm([
      ['ns', 'x'],
      ['is_valid', 'true:really'],
    ]);
    expect(body).toBe('ns:x\nis_valid:true:really\n');
    expect(Object.fromEntries(parseKeyValueForm(body)!)).toEqual({ ns: 'x', is_valid: 'true:really' });
    for (const bad of ['is_valid:true', 'is_valid\n', ':x\n', 'a:1\na:2\n'])
      expect(parseKeyValueForm(bad)).toBeNull();
    expect(() => encodeKeyValueForm([['a', 'x\nis_valid:true']])).toThrow(TypeError);
  });
});

describe('response nonce (section 10.1)', () => {
  it('parses the time stamp and refuses malformed nonces', () => {
    expect(parseResponseNonce('2005-05-15T17:11:51ZUNIQUE')).toBe(Date.UTC(2005, 4, 15, 17, 11, 51));
    for (const bad of [
      '2005-05-15T17:11:51',
      '2005-02-30T00:00:00Z',
      '2005-05-15 17:11:51Z',
      '2005-05-15T17:11:51Z x',
      `2005-05-15T17:11:51Z${'a'.repeat(236)}`,
    ]) {
      expect(parseResponseNonce(bad), bad).toBeNull();
    }
  });
});

describe('realm (section 9.2)', () => {
  it('matches scheme, port, host (with wildcard) and path as a directory', () => {
    expect(returnToMatchesRealm('http://a.test/cb?x', 'http://a.test/')).toBe(true);
    expect(returnToMatchesRealm('http://a.test/app/cb', 'http://a.test/app')).toBe(true);
    expect(returnToMatchesRealm('http://x.a.test/cb', 'http://*.a.test/')).toBe(true);
    for (const [returnTo, realm] of [
      ['http://a.test/application', 'http://a.test/app'],
      ['https://a.test/', 'http://a.test/'],
      ['http://a.test:81/', 'http://a.test/'],
      ['http://evila.test/', 'http://*.a.test/'],
      ['http://x.a.test/', 'http://a.test/'],
      ['http://a.test/', 'http://a.test/#f'],
    ]) {
      expect(returnToMatchesRealm(returnTo!, realm!), `${returnTo} under ${realm}`).toBe(false);
    }
  });
});

describe('return_to against the received URL (section 11.1)', () => {
  it('needs the same scheme, authority, path and every return_to parameter value', () => {
    const returnTo = 'http://a.test/cb?rp_nonce=n&x=1&x=2';
    expect(callbackMatchesReturnTo(new URL(`${returnTo}&openid.mode=id_res`), returnTo)).toBe(true);
    for (const received of [
      'http://a.test/cb?rp_nonce=n&x=1',
      'http://a.test/cb?rp_nonce=m&x=1&x=2',
      'http://a.test:81/cb?rp_nonce=n&x=1&x=2',
      'http://a.test/cb/?rp_nonce=n&x=1&x=2',
    ]) {
      expect(callbackMatchesReturnTo(new URL(received), returnTo), received).toBe(false);
    }
  });
});

describe('XRDS (section 7.3.2)', () => {
  const xrds = (services: string) =>
    `<?xml version="1.0"?><xrds:XRDS xmlns:xrds="xri://$xrds" xmlns="xri://$xrd*($v*2.0)"><XRD>${services}</XRD></xrds:XRDS>`;
  it('prefers OP identifier elements, then lower priority, and skips non-http URIs and XRI local ids', () => {
    const services = parseXrds(
      xrds(`
      <Service priority="0"><Type>http://specs.openid.net/auth/2.0/signon</Type><URI>http://s.test/ep</URI><LocalID>http://s.test/me</LocalID></Service>
      <Service priority="20"><Type>http://specs.openid.net/auth/2.0/server</Type><URI>http://b.test/?a=1&amp;b=2</URI></Service>
      <Service priority="10"><Type>http://specs.openid.net/auth/2.0/server</Type><URI priority="1">xri://=x</URI><URI priority="2">https://a.test/ep</URI></Service>
      <Service><Type>http://specs.openid.net/auth/2.0/signon</Type><URI>http://x.test/</URI><LocalID>=xri</LocalID></Service>`),
    );
    expect(services).toEqual([
      { kind: 'server', endpoint: 'https://a.test/ep', localId: null },
      { kind: 'server', endpoint: 'http://b.test/?a=1&b=2', localId: null },
      { kind: 'signon', endpoint: 'http://s.test/ep', localId: 'http://s.test/me' },
    ]);
  });
  it('returns null for non-XRDS text and a DOCTYPE', () => {
    expect(parseXrds('<html></html>')).toBeNull();
    expect(parseXrds('<!DOCTYPE x><XRDS/>')).toBeNull();
  });
});

describe('HTML discovery (section 7.3.3)', () => {
  it('reads links and the Yadis meta in the head only', () => {
    expect(
      parseHtmlDiscovery(
        '<html><head><META HTTP-EQUIV="X-XRDS-Location" content="/x"><link rel="stylesheet openid2.provider" href="http://op.test/?a=1&amp;b=2"></head>' +
          '<body><link rel="openid2.local_id" href="http://evil.test/"></body></html>',
      ),
    ).toEqual({ provider: 'http://op.test/?a=1&b=2', localId: null, xrdsLocation: '/x' });
  });
});
