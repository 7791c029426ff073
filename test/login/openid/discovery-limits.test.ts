import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { discover } from '../../../src/login/openid/discover.js';
import { RelyingParty } from '../../../src/login/openid/relying-party.js';
import { verifyDiscoveredInformation } from '../../../src/login/openid/verify-discovered.js';
import {
  startDevelopmentProvider,
  type RunningDevelopmentProvider,
} from '../../../src/testing/provider/index.js';
import { expectLoginError, memoryNonces, RETURN_TO, RP_BASE } from '../../support/openid-harness.js';
import {
  startCanary,
  startEndlessServer,
  startServer,
  startSilentServer,
  type TestServer,
} from '../../support/openid-servers.js';

let op: RunningDevelopmentProvider;
let canary: TestServer;
const servers: TestServer[] = [];
beforeAll(async () => {
  op = await startDevelopmentProvider();
  canary = await startCanary();
});
afterAll(async () => {
  await op.close();
  await canary.close();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  expect(canary.hits(), 'the canary server must never be contacted').toBe(0);
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> {
  servers.push(await startServer(handler));
  return servers.at(-1)!;
}

function rpFor(
  identifier: string,
  options: { timeoutMs?: number; maxResponseBytes?: number } = {},
): RelyingParty {
  return new RelyingParty({
    providers: [{ name: 'P', identifier }],
    returnTo: RETURN_TO,
    realm: `${RP_BASE}/`,
    nonces: memoryNonces(),
    clock: Date.now,
    ...options,
  });
}

const beginAt = (rp: RelyingParty) => rp.begin(rp.findProvider('P')!);
const limits = (origins: string[]) => ({
  timeoutMs: 1000,
  maxBytes: 65536,
  allowUrl: (u: URL) => origins.includes(u.origin),
});

describe('discovery is bounded', () => {
  it('gives up on a provider that never answers within timeoutMs', async () => {
    const silent = await startSilentServer();
    servers.push(silent);
    const started = Date.now();
    await expectLoginError(beginAt(rpFor(`${silent.url}/`, { timeoutMs: 300 })), 'provider_unreachable');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('stops reading an endless discovery document at maxResponseBytes', async () => {
    const endless = await startEndlessServer('<p>'.repeat(4096), 1);
    servers.push(endless);
    const started = Date.now();
    const err = await expectLoginError(
      beginAt(rpFor(`${endless.url}/`, { maxResponseBytes: 32 * 1024 })),
      'provider_unreachable',
    );
    expect((err.cause as { reason?: string }).reason).toBe('too_large');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a redirect off the allow-list without following it', async () => {
    const redirecting = await serve((_req, res) => res.writeHead(302, { location: `${canary.url}/` }).end());
    const err = await expectLoginError(beginAt(rpFor(`${redirecting.url}/`)), 'provider_unreachable');
    expect((err.cause as { reason?: string }).reason).toBe('not_allowed');
  });

  it('refuses an X-XRDS-Location off the allow-list without fetching it', async () => {
    const pointing = await serve((_req, res) =>
      res
        .writeHead(200, { 'x-xrds-location': `${canary.url}/xrds`, 'content-type': 'text/html' })
        .end('<html></html>'),
    );
    await expectLoginError(beginAt(rpFor(`${pointing.url}/`)), 'provider_unreachable');
  });

  it('reports a page without any OpenID 2.0 service', async () => {
    const plain = await serve((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<html><head></head><body><link rel="openid2.provider" href="http://x.test/"></body></html>'),
    );
    await expectLoginError(beginAt(rpFor(`${plain.url}/`)), 'provider_unreachable');
  });

  it('refuses an XRDS with a DOCTYPE (entity expansion)', async () => {
    const xrds = await serve((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/xrds+xml' })
        .end(
          `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "${op.endpoint}">]><xrds:XRDS xmlns:xrds="xri://$xrds" xmlns="xri://$xrd*($v*2.0)"><XRD><Service><Type>http://specs.openid.net/auth/2.0/server</Type><URI>&a;</URI></Service></XRD></xrds:XRDS>`,
        ),
    );
    await expectLoginError(beginAt(rpFor(`${xrds.url}/`)), 'provider_unreachable');
  });

  it('uses HTML discovery when there is no XRDS, and follows allowed redirects', async () => {
    const html = await serve((req, res) => {
      if (req.url === '/') return void res.writeHead(301, { location: '/me' }).end();
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<html><head><link rel="openid2.provider" href="/endpoint"><link rel="openid2.local_id" href="${op.userUrl('carol')}"></head></html>`,
      );
    });
    const { redirectUrl, state } = await beginAt(rpFor(`${html.url}/`));
    const sent = new URL(redirectUrl).searchParams;
    expect(sent.get('openid.claimed_id')).toBe(`${html.url}/me`);
    expect(sent.get('openid.identity')).toBe(op.userUrl('carol'));
    expect(state.opEndpoint).toBe(`${html.url}/endpoint`);
  });

  it('refuses an identifier whose every OP endpoint is at another origin', async () => {
    // The server would contact that endpoint later (check_authentication): an allow-listed
    // identifier must not be able to aim it elsewhere.
    const pointing = await serve((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<html><head><link rel="openid2.provider" href="${canary.url}/endpoint"></head></html>`),
    );
    const err = await expectLoginError(beginAt(rpFor(`${pointing.url}/`)), 'provider_unreachable');
    expect(err.message).toContain('at its own address');
  });

  it('discovers the development provider by Yadis and by its HTML page', async () => {
    const byYadis = await discover(new URL(op.userUrl('dave')), limits([new URL(op.url).origin]));
    expect(byYadis).toEqual({
      claimedId: op.userUrl('dave'),
      services: [{ kind: 'signon', endpoint: op.endpoint, localId: op.userUrl('dave') }],
    });
    const page = await fetch(op.userUrl('dave'), { headers: { accept: 'text/html' } });
    expect(page.headers.get('x-xrds-location')).toBe(`${op.userUrl('dave')}?format=xrds`);
    expect(await page.text()).toContain(`<link rel="openid2.provider" href="${op.endpoint}">`);
  });
});

describe('claimed identifier verification by discovery (section 11.2)', () => {
  const origins = () => [new URL(op.url).origin];

  it('accepts a claimed identifier whose discovered service matches', async () => {
    await verifyDiscoveredInformation(
      new URL(op.userUrl('erin')),
      op.userUrl('erin'),
      op.endpoint,
      limits(origins()),
    );
  });

  it('refuses a different local identifier or OP endpoint', async () => {
    await expectLoginError(
      verifyDiscoveredInformation(
        new URL(op.userUrl('erin')),
        op.userUrl('frank'),
        op.endpoint,
        limits(origins()),
      ),
      'invalid_response',
    );
    await expectLoginError(
      verifyDiscoveredInformation(
        new URL(op.userUrl('erin')),
        op.userUrl('erin'),
        `${op.url}/other`,
        limits(origins()),
      ),
      'invalid_response',
    );
  });

  it('refuses an OP identifier (server service) as a claimed identifier', async () => {
    await expectLoginError(
      verifyDiscoveredInformation(new URL(op.identifier), op.identifier, op.endpoint, limits(origins())),
      'invalid_response',
    );
  });

  it('refuses a claimed identifier that redirects to another one', async () => {
    const redirecting = await serve((_req, res) => res.writeHead(302, { location: '/other' }).end());
    await expectLoginError(
      verifyDiscoveredInformation(
        new URL(`${redirecting.url}/me`),
        `${redirecting.url}/me`,
        op.endpoint,
        limits([redirecting.url]),
      ),
      'invalid_response',
    );
  });
});
