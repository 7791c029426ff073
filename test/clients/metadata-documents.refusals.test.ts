/**
 * Client metadata documents that cannot be used (issue 39): each is an error page at the
 * authorization endpoint (never a redirect: no redirect URI of the document is verified) and
 * `invalid_client` at the token endpoint, within seconds, and none is cached.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/index.js';
import { createTestApp, expectOAuthError, type TestApp } from '../support/app.js';
import { clientDocument, startDocumentServer, type DocumentServer } from '../support/document-server.js';

let docs: DocumentServer;
let t: TestApp;
let events: ServerEvent[];

beforeAll(async () => {
  docs = await startDocumentServer();
  t = await createTestApp({
    scopes: { realms: 'See your realms' },
    // Every refusal here fetches from one address: the fetch limit is tested on its own, below.
    clientMetadataDocuments: {
      allowLoopbackOrigins: [docs.origin],
      ca: [docs.ca],
      maxFetchesPerMinute: false,
    },
  });
  events = [];
  t.server.events.on('*', (event) => void events.push(event));
});
afterAll(async () => {
  await t.close();
  await docs.close();
});

const authorize = (app: TestApp, clientId: string) =>
  app.agent.get('/oauth/authorize').query({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: 'http://localhost:53682/callback',
    state: 'st',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  });

const exchange = (app: TestApp, clientId: string) =>
  app.agent.post('/oauth/token').type('form').send({
    grant_type: 'authorization_code',
    code: 'some-code',
    client_id: clientId,
    redirect_uri: 'http://localhost:53682/callback',
    code_verifier: 'a-code-verifier-that-is-long-enough-for-rfc-7636-xyz',
  });

/** Asserts both endpoints refuse `clientId` quickly, without a redirect; resolves the page's text. */
async function expectRefused(clientId: string, withinMs = 5000, app = t): Promise<string> {
  let started = Date.now();
  const page = await authorize(app, clientId);
  expect(Date.now() - started).toBeLessThan(withinMs);
  expect(page.status).toBe(400);
  expect(page.headers.location).toBeUndefined();
  expect(page.headers['content-type']).toMatch(/^text\/html/);
  started = Date.now();
  const token = await exchange(app, clientId);
  expect(Date.now() - started).toBeLessThan(withinMs);
  expectOAuthError(token, 'invalid_client', 401);
  expect(await app.storage.clients.find(clientId)).toBeNull();
  return page.text;
}

/** Serves `json` at a fresh path; resolves the document's URL. */
function served(name: string, json: (url: string) => unknown): string {
  const url = `${docs.origin}/${name}/client.json`;
  docs.serve(`/${name}/client.json`, { json: json(url) });
  return url;
}

describe('a document that cannot be used', () => {
  it('a client_name or contacts with control characters or spaces (a NUL broke PostgreSQL), and a host ending in a dot', async () => {
    const nul = served('nul-name', (u) => clientDocument(u, { client_name: 'Agent\u0000Desk' }));
    expect(await expectRefused(nul)).toContain('client_name');
    const rtl = served('rtl-name', (u) => clientDocument(u, { client_name: 'Claude\u202Eedoc SV\u202C' }));
    expect(await expectRefused(rtl)).toContain('client_name');
    const spaced = served('spaced-contact', (u) =>
      clientDocument(u, { contacts: ['Jane Doe <jane@x.example>'] }),
    );
    expect(await expectRefused(spaced)).toContain('contacts');
    const dotted = `https://bad.example./client.json`;
    expect(await expectRefused(dotted)).toContain('must not end its host name with a dot');
  });

  it('client_id one character off', async () => {
    const url = served('off-by-one', (u) => clientDocument(u.replace(/n$/, 'm')));
    expect(await expectRefused(url)).toContain('its client_id is not the URL it is served at');
  });

  it('client_id with a trailing slash', async () => {
    const url = served('slash', (u) => clientDocument(`${u}/`));
    expect(await expectRefused(url)).toContain('client_id');
  });

  it('a client_secret, or a shared-secret authentication method', async () => {
    const secret = served('secret', (u) => clientDocument(u, { client_secret: 'hunter2' }));
    const page = await expectRefused(secret);
    expect(page).toContain('client_secret');
    expect(page).not.toContain('hunter2');
    const basic = served('basic', (u) =>
      clientDocument(u, { token_endpoint_auth_method: 'client_secret_basic' }),
    );
    await expectRefused(basic);
    const plural = served('plural', (u) => {
      const doc = clientDocument(u, {
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt'],
      });
      delete doc.token_endpoint_auth_method;
      return doc;
    });
    await expectRefused(plural);
    expect(JSON.stringify(events)).not.toContain('hunter2');
  });

  it('no client_name, no redirect_uris, a redirect URI that is not one, no JSON', async () => {
    await expectRefused(served('no-name', (u) => clientDocument(u, { client_name: undefined })));
    await expectRefused(served('no-uris', (u) => clientDocument(u, { redirect_uris: [] })));
    await expectRefused(
      served('bad-uri', (u) => clientDocument(u, { redirect_uris: ['http://desk.example/cb'] })),
    );
    docs.serve('/not-json/client.json', (_req, res) => void res.writeHead(200).end('<html>'));
    await expectRefused(`${docs.origin}/not-json/client.json`);
  });

  it('over the size cap, declared or streamed', async () => {
    const padding = 'x'.repeat(70 * 1024);
    const declared = served('big', (u) => clientDocument(u, { padding }));
    expect(await expectRefused(declared)).toContain('exceeds 65536 bytes');
    docs.serve('/big-stream/client.json', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 80; i += 1) res.write('x'.repeat(1024));
      res.end();
    });
    await expectRefused(`${docs.origin}/big-stream/client.json`);
  });

  it('a redirect, even to a valid document', async () => {
    const target = served('target', (u) => clientDocument(u));
    docs.serve('/moved/client.json', (_req, res) => void res.writeHead(302, { location: target }).end());
    expect(await expectRefused(`${docs.origin}/moved/client.json`)).toContain('redirects are not followed');
    expect(docs.requests('/target/client.json')).toBe(0);
  });

  it('a body that trickles past the deadline', async () => {
    const timers: NodeJS.Timeout[] = [];
    docs.serve('/trickle/client.json', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      timers.push(setInterval(() => res.write(' '), 200));
    });
    try {
      const text = await expectRefused(`${docs.origin}/trickle/client.json`, 10_000);
      expect(text).toContain('no complete answer within 4000 ms');
    } finally {
      timers.forEach(clearInterval);
    }
  }, 30_000);

  it('URLs that are not a document client_id: a dot segment, a fragment, userinfo, no path', async () => {
    for (const bad of [
      `${docs.origin}/a/../client.json`,
      `${docs.origin}/client.json#x`,
      `https://user@${new URL(docs.origin).host}/client.json`,
      `${docs.origin}/`,
    ]) {
      await expectRefused(bad);
    }
    expect(events.some((e) => e.type === 'client_document.refused' && e.reason === 'client_id')).toBe(true);
  });
});

describe('addresses that are not public', () => {
  it('169.254.169.254 (cloud metadata), refused before any connection', async () => {
    const text = await expectRefused('https://169.254.169.254/latest/client.json', 1000);
    expect(text).toContain('not at a public address');
  });

  it('private and IPv6 loopback literals', async () => {
    for (const url of [
      'https://10.0.0.1/client.json',
      'https://[::1]/client.json',
      'https://[::ffff:7f00:1]/client.json',
      'https://[::ffff:a9fe:a9fe]/client.json',
      'https://100.64.0.1/client.json',
      'https://[fd00::1]/client.json',
      'https://0.0.0.0/client.json',
    ]) {
      expect(await expectRefused(url, 1000)).toContain('not at a public address');
    }
  });

  it('loopback without the allow-list, by address and by name (localhost resolves to loopback)', async () => {
    const strict = await createTestApp({
      scopes: { realms: 'See your realms' },
      clientMetadataDocuments: { ca: [docs.ca] },
    });
    try {
      const url = served('strict', (u) => clientDocument(u));
      expect(await expectRefused(url, 5000, strict)).toContain('not at a public address');
      const byName = `https://localhost:${new URL(docs.origin).port}/strict/client.json`;
      expect(await expectRefused(byName, 5000, strict)).toContain('not at a public address');
      expect(docs.requests('/strict/client.json')).toBe(0);
    } finally {
      await strict.close();
    }
  });
});

describe('the fetch limit per address', () => {
  it('refuses with 429 and Retry-After, fetching nothing, past maxFetchesPerMinute; cached documents do not count', async () => {
    const limited = await createTestApp({
      scopes: { realms: 'See your realms' },
      clientMetadataDocuments: { allowLoopbackOrigins: [docs.origin], ca: [docs.ca], maxFetchesPerMinute: 2 },
    });
    try {
      const ids = ['/limit/a.json', '/limit/b.json', '/limit/c.json'].map((path) => {
        const id = `${docs.origin}${path}`;
        docs.serve(path, { json: clientDocument(id), headers: { 'Cache-Control': 'max-age=600' } });
        return id;
      });
      // Two fetches, then a use of a cached document (no fetch), then a third URL: refused.
      for (const id of [ids[0]!, ids[1]!, ids[0]!]) {
        const res = await authorize(limited, id);
        expect(res.status, `${id}: ${res.text.slice(0, 200)}`).not.toBe(429);
      }
      const refused = await authorize(limited, ids[2]!);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers.location).toBeUndefined();
      expect(docs.requests('/limit/a.json')).toBe(1);
      expect(docs.requests('/limit/c.json')).toBe(0);
      const token = await exchange(limited, ids[2]!);
      expect(token.status).toBe(429);
      expect(token.body.error).toBe('temporarily_unavailable');
      expect(docs.requests('/limit/c.json')).toBe(0);
    } finally {
      await limited.close();
    }
  });
});
