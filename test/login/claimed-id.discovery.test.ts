/**
 * Issue 18, finding 5, section 11.2: discovery runs on the normalised claimed identifier, and what
 * it finds is compared in normal form, so the identifier a user is known by is exactly the one
 * discovery confirmed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENID2_NS, SERVER_TYPE } from '../../src/login/openid/constants.js';
import { RelyingParty } from '../../src/login/openid/relying-party.js';
import { expectLoginError, memoryNonces, RETURN_TO, RP_BASE } from '../support/openid-harness.js';
import { startServer, type TestServer } from '../support/openid-servers.js';

/**
 * A provider that confirms every signature (`is_valid:true`), so that only discovery decides.
 * `/self` delegates to its endpoint with a local id spelled otherwise; `/other` names another
 * local id. Records the paths discovered.
 */
let liar: TestServer;
const discovered: string[] = [];
beforeAll(async () => {
  liar = await startServer((req, res) => {
    const base = `http://127.0.0.1:${req.socket.localPort}`;
    if (req.method === 'POST') return void res.end(`ns:${OPENID2_NS}\nis_valid:true\n`);
    discovered.push(req.url!);
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'application/xrds+xml' });
      return void res.end(
        `<xrds:XRDS xmlns:xrds="xri://$xrds" xmlns="xri://$xrd*($v*2.0)"><XRD><Service><Type>${SERVER_TYPE}</Type><URI>${base}/endpoint</URI></Service></XRD></xrds:XRDS>`,
      );
    }
    const localId =
      req.url === '/self' ? `HTTP://127.0.0.1:${req.socket.localPort}/x/../self` : `${base}/other-local`;
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      `<html><head><link rel="openid2.provider" href="${base}/endpoint"><link rel="openid2.local_id" href="${localId}"></head></html>`,
    );
  });
});
afterAll(() => liar.close());

async function verifyAssertion(claimedId: string, identity: string) {
  const rp = new RelyingParty({
    providers: [{ name: 'Liar', identifier: `${liar.url}/` }],
    returnTo: RETURN_TO,
    realm: `${RP_BASE}/`,
    nonces: memoryNonces(),
    clock: Date.now,
  });
  const { state } = await rp.begin(rp.findProvider('Liar')!);
  const callback = new URL(state.returnTo);
  const fields = {
    ns: OPENID2_NS,
    mode: 'id_res',
    op_endpoint: `${liar.url}/endpoint`,
    claimed_id: claimedId,
    identity,
    return_to: state.returnTo,
    response_nonce: `${new Date().toISOString().slice(0, 19)}Z1`,
    assoc_handle: 'h',
    signed: 'op_endpoint,claimed_id,identity,return_to,response_nonce,assoc_handle',
    sig: 'AAAA',
  };
  for (const [key, value] of Object.entries(fields)) callback.searchParams.set(`openid.${key}`, value);
  discovered.length = 0;
  return rp.verify(callback, state);
}

describe('claimed identifier discovery in normal form (section 11.2)', () => {
  it('discovers the normal form and returns it, whatever the spelling asserted', async () => {
    const host = new URL(liar.url).host;
    const identity = await verifyAssertion(`HTTP://${host}/x/./../%73elf`, `http://${host}/self`);
    expect(identity.identifier).toBe(`${liar.url}/self`);
    expect(discovered).toEqual(['/self']);
  });

  it('accepts a discovered local id that is another spelling of openid.identity', async () => {
    await expect(verifyAssertion(`${liar.url}/self`, `${liar.url}/./self`)).resolves.toMatchObject({
      identifier: `${liar.url}/self`,
    });
  });

  it('still refuses a discovered local id that is another identifier', async () => {
    await expectLoginError(verifyAssertion(`${liar.url}/other`, `${liar.url}/other`), 'invalid_response');
  });
});
