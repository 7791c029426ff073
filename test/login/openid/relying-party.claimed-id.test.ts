import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENID2_NS, SERVER_TYPE } from '../../../src/login/openid/constants.js';
import { RelyingParty } from '../../../src/login/openid/relying-party.js';
import { expectLoginError, memoryNonces, RETURN_TO, RP_BASE } from '../../support/openid-harness.js';
import { startServer, type TestServer } from '../../support/openid-servers.js';

/**
 * A provider that confirms every assertion (`is_valid:true`) whatever its signature: only the
 * claimed identifier check by discovery (section 11.2) stands between it and any identifier at
 * its origin. `/self` delegates to its endpoint, `/victim` to another provider's.
 */
let liar: TestServer;
beforeAll(async () => {
  liar = await startServer((req, res) => {
    const endpoint = `http://127.0.0.1:${req.socket.localPort}/endpoint`;
    if (req.method === 'POST') return void res.end(`ns:${OPENID2_NS}\nis_valid:true\n`);
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'application/xrds+xml' });
      return void res.end(
        `<xrds:XRDS xmlns:xrds="xri://$xrds" xmlns="xri://$xrd*($v*2.0)"><XRD><Service><Type>${SERVER_TYPE}</Type><URI>${endpoint}</URI></Service></XRD></xrds:XRDS>`,
      );
    }
    const delegate = req.url === '/self' ? endpoint : 'http://127.0.0.1:9/endpoint';
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><head><link rel="openid2.provider" href="${delegate}"></head></html>`);
  });
});
afterAll(() => liar.close());

async function assertionFor(path: string, identityPath = path) {
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
    claimed_id: `${liar.url}${path}`,
    identity: `${liar.url}${identityPath}`,
    return_to: state.returnTo,
    response_nonce: `${new Date().toISOString().slice(0, 19)}Z1`,
    assoc_handle: 'h',
    signed: 'op_endpoint,claimed_id,identity,return_to,response_nonce,assoc_handle',
    sig: 'AAAA',
  };
  for (const [key, value] of Object.entries(fields)) callback.searchParams.set(`openid.${key}`, value);
  return { rp, callback, state };
}

describe('claimed identifier verification in RelyingParty.verify', () => {
  it('accepts an identifier whose discovered information names the asserting endpoint', async () => {
    const { rp, callback, state } = await assertionFor('/self');
    await expect(rp.verify(callback, state)).resolves.toMatchObject({ identifier: `${liar.url}/self` });
  });

  it('refuses an identifier at an allowed origin that delegates to another provider', async () => {
    const { rp, callback, state } = await assertionFor('/victim');
    await expectLoginError(rp.verify(callback, state), 'invalid_response');
  });

  it('keeps a fragment in the returned identifier but discovers without it (section 11.2, 11.5)', async () => {
    const { rp, callback, state } = await assertionFor('/self#2', '/self');
    await expect(rp.verify(callback, state)).resolves.toMatchObject({ identifier: `${liar.url}/self#2` });
  });
});
