/**
 * Client ID metadata documents (issue 39): an MCP client names itself by the https URL of a JSON
 * document it serves; the authorization server fetches it (here from a real https server on
 * 127.0.0.1, trusted through `allowLoopbackOrigins` and `ca`) and treats it as a public client.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import express from 'express';
import supertest from 'supertest';
import {
  authorizeRouter,
  createAuthorizationServer,
  registerClient,
  type ServerEvent,
} from '../../src/index.js';
import { createTestApp, expectOAuthError, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin } from '../support/flow.js';
import {
  clientDocument,
  DOCUMENT_CLIENT_VERIFIER,
  documentClientQuery,
  documentClientTokens,
  startDocumentServer,
  type DocumentServer,
} from '../support/document-server.js';

let docs: DocumentServer;
let t: TestApp;
let events: ServerEvent[];
let clientId: string;

async function start(options: Record<string, unknown> = {}) {
  t = await createTestApp({
    scopes: { realms: 'See your realms' },
    clientMetadataDocuments: {
      allowLoopbackOrigins: [docs.origin, docs.localhostOrigin],
      ca: [docs.ca],
      ...options,
    },
  });
  events = [];
  t.server.events.on('*', (event) => void events.push(event));
}

beforeEach(async () => {
  docs = await startDocumentServer();
  clientId = `${docs.origin}/oauth/client.json`;
  docs.serve('/oauth/client.json', { json: clientDocument(clientId) });
});
afterEach(async () => {
  await t?.close();
  await docs.close();
});

const query = (extra: Record<string, string> = {}) => documentClientQuery(clientId, extra);

describe('a client named by its metadata document', () => {
  it('runs the code flow with PKCE: login, consent that names the hosts, token, refresh, API', async () => {
    await start();
    const token = await documentClientTokens(t, clientId, (page) => {
      expect(page).toContain('Agent Desk');
      expect(page).toContain('not registered by this site');
      expect(page).toContain(`<strong>${new URL(docs.origin).host}</strong>`);
      expect(page).toContain('<strong>localhost:53682</strong>');
      expect(page).toContain('You will be asked each time it signs in.');
    });
    expect(token.refresh_token).toBeTruthy();
    const api = await t.agent.get('/v1/realms').set('authorization', `Bearer ${token.access_token}`);
    expect(api.status).toBe(200);
    const refreshed = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'refresh_token',
      refresh_token: token.refresh_token,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);

    const stored = await t.storage.clients.find(clientId);
    expect(stored).toMatchObject({
      clientId,
      applicationName: 'Agent Desk',
      secretHash: null,
      grantType: 'authorization_code',
      scopes: ['realms'],
      disabled: false,
      registeredVia: 'document',
    });
    // One fetch for the whole flow: authorize, resume, consent, token, refresh.
    expect(docs.requests('/oauth/client.json')).toBe(1);
    const saved = events.filter((e) => e.type === 'client_document.saved');
    expect(saved).toMatchObject([{ clientId, created: true, applicationName: 'Agent Desk' }]);
  });

  it('refuses a code exchange with the wrong verifier, as for any public client', async () => {
    await start();
    let res = await authorizeWithLogin(t, query());
    res = await answerConsent(t, res.text, 'allow');
    const code = new URL(res.headers.location!).searchParams.get('code')!;
    const token = await t.agent
      .post('/oauth/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code,
        client_id: clientId,
        redirect_uri: 'http://localhost:53682/callback',
        code_verifier: `${DOCUMENT_CLIENT_VERIFIER}-wrong`,
      });
    expectOAuthError(token, 'invalid_grant');
  });

  it('requires PKCE: a request without a challenge goes back with invalid_request', async () => {
    await start();
    const res = await t.agent
      .get('/oauth/authorize')
      .query(query({ code_challenge: '', code_challenge_method: '' }));
    // Empty parameters are absent ones.
    expect(res.status).toBe(302);
    expect(new URL(res.headers.location!).searchParams.get('error')).toBe('invalid_request');
  });

  it('makes one fetch for 20 concurrent first authorizations, and saves one client', async () => {
    docs.serve('/oauth/client.json', { json: clientDocument(clientId), delayMs: 300 });
    await start();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => t.agent.get('/oauth/authorize').query(query())),
    );
    for (const res of answers) expect(res.status).toBe(200);
    expect(docs.requests('/oauth/client.json')).toBe(1);
    expect(events.filter((e) => e.type === 'client_document.saved')).toHaveLength(1);
    expect((await t.storage.clients.list!()).filter((c) => c.clientId === clientId)).toHaveLength(1);
  });

  it('does not fetch again within the cache lifetime, and does after it', async () => {
    let now = Date.now();
    docs.serve('/oauth/client.json', {
      json: clientDocument(clientId),
      headers: { 'cache-control': 'public, max-age=600' },
    });
    // The server's clock moves the cache on.
    t = await createTestApp({
      scopes: { realms: 'See your realms' },
      clock: () => now,
      clientMetadataDocuments: { allowLoopbackOrigins: [docs.origin], ca: [docs.ca], maxCacheSeconds: 300 },
    });
    expect((await t.agent.get('/oauth/authorize').query(query())).status).toBe(200);
    expect((await t.agent.get('/oauth/authorize').query(query())).status).toBe(200);
    expect(docs.requests('/oauth/client.json')).toBe(1);
    now += 299_000;
    expect((await t.agent.get('/oauth/authorize').query(query())).status).toBe(200);
    expect(docs.requests('/oauth/client.json')).toBe(1);
    // max-age=600 is held to the ceiling of 300 s.
    now += 2_000;
    expect((await t.agent.get('/oauth/authorize').query(query())).status).toBe(200);
    expect(docs.requests('/oauth/client.json')).toBe(2);
  });

  it('does not cache a failed fetch: the next request fetches again and succeeds', async () => {
    docs.serve('/oauth/client.json', (_req, res) => void res.writeHead(503).end());
    await start();
    const first = await t.agent.get('/oauth/authorize').query(query());
    expect(first.status).toBe(400);
    expect(first.headers.location).toBeUndefined();
    expect(first.text).toContain('answered 503');
    docs.serve('/oauth/client.json', { json: clientDocument(clientId) });
    const second = await t.agent.get('/oauth/authorize').query(query());
    expect(second.status).toBe(200);
    expect(docs.requests('/oauth/client.json')).toBe(2);
    expect(events.find((e) => e.type === 'client_document.refused')).toMatchObject({
      clientId,
      reason: 'fetch',
    });
  });

  it('sees a changed document after its lifetime: a new redirect URI, a new name', async () => {
    let now = Date.now();
    t = await createTestApp({
      scopes: { realms: 'See your realms' },
      clock: () => now,
      clientMetadataDocuments: { allowLoopbackOrigins: [docs.origin], ca: [docs.ca] },
    });
    const added = 'https://desk.example/second/callback';
    expect((await t.agent.get('/oauth/authorize').query(query({ redirect_uri: added }))).status).toBe(400);
    docs.serve('/oauth/client.json', {
      json: clientDocument(clientId, {
        client_name: 'Agent Desk 2',
        redirect_uris: ['http://localhost/callback', added],
      }),
    });
    now += 61_000;
    const res = await t.agent.get('/oauth/authorize').query(query({ redirect_uri: added }));
    expect(res.status).toBe(200);
    expect((await t.storage.clients.find(clientId))?.applicationName).toBe('Agent Desk 2');
  });
});

describe('the cache, with the default limits', () => {
  it('a client that adds a redirect URI behind a year-long max-age is seen within the hour (the ceiling)', async () => {
    let now = Date.now();
    // A CDN in front of the client's site: a document cached for a year, by its headers.
    docs.serve('/oauth/client.json', {
      json: clientDocument(clientId),
      headers: { 'cache-control': 'public, max-age=31536000, immutable' },
    });
    t = await createTestApp({
      scopes: { realms: 'See your realms' },
      clock: () => now,
      clientMetadataDocuments: { allowLoopbackOrigins: [docs.origin], ca: [docs.ca] },
    });
    expect((await t.agent.get('/oauth/authorize').query(query())).status).toBe(200);
    const added = 'https://desk.example/new/callback';
    docs.serve('/oauth/client.json', {
      json: clientDocument(clientId, { redirect_uris: ['http://localhost/callback', added] }),
      headers: { 'cache-control': 'public, max-age=31536000, immutable' },
    });
    now += 3599_000;
    expect((await t.agent.get('/oauth/authorize').query(query({ redirect_uri: added }))).status).toBe(400);
    expect(docs.requests('/oauth/client.json')).toBe(1);
    now += 2_000;
    expect((await t.agent.get('/oauth/authorize').query(query({ redirect_uri: added }))).status).toBe(200);
    expect(docs.requests('/oauth/client.json')).toBe(2);
  });
});

describe('a document on a host name', () => {
  it('is fetched from the address the name resolves to (localhost, on the allow-list)', async () => {
    const byName = `${docs.localhostOrigin}/oauth/by-name.json`;
    docs.serve('/oauth/by-name.json', { json: clientDocument(byName) });
    await start();
    const res = await t.agent.get('/oauth/authorize').query(query({ client_id: byName }));
    expect(res.status).toBe(200);
    expect(docs.requests('/oauth/by-name.json')).toBe(1);
  });
});

describe('redirect URIs of a document client', () => {
  it('match exactly; a portless loopback one on any port of the same host, localhost not 127.0.0.1', async () => {
    docs.serve('/oauth/client.json', {
      json: clientDocument(clientId, {
        redirect_uris: [
          'http://localhost/callback',
          'http://127.0.0.1/cb',
          'https://desk.example/oauth/callback',
        ],
      }),
    });
    await start();
    for (const ok of [
      'http://localhost/callback',
      'http://localhost:1/callback',
      'http://localhost:65535/callback',
      'http://127.0.0.1:5000/cb',
      'https://desk.example/oauth/callback',
    ]) {
      const res = await t.agent.get('/oauth/authorize').query(query({ redirect_uri: ok }));
      expect(res.status, ok).toBe(200);
    }
    for (const bad of [
      'http://127.0.0.1:5000/callback',
      'http://localhost:5000/cb',
      'http://[::1]:5000/callback',
      'https://localhost:5000/callback',
      'http://localhost:5000/callback/more',
      'http://localhost:5000/Callback',
      'http://localhost:99999/callback',
      'http://localhost:05000/callback',
      'https://desk.example/oauth/callback/more',
      'https://desk.example/oauth/callback?x=1',
      'https://desk.example:443/oauth/callback',
    ]) {
      const res = await t.agent.get('/oauth/authorize').query(query({ redirect_uri: bad }));
      expect(res.status, bad).toBe(400);
      expect(res.headers.location, bad).toBeUndefined();
    }
  });

  it('an operator client keeps its own rule: localhost exact, never the document rule', async () => {
    await start();
    await registerClient(t.storage, {
      clientId: 'operator-native',
      applicationName: 'Operator native app',
      redirectUri: 'http://localhost/callback',
      public: true,
      scopes: ['realms'],
    });
    const res = await t.agent
      .get('/oauth/authorize')
      .query(query({ client_id: 'operator-native', redirect_uri: 'http://localhost:5000/callback' }));
    expect(res.status).toBe(400);
  });
});

describe('what a document client may do at the other endpoints', () => {
  it('gets a refresh token without refresh_token in grant_types, as every code client does', async () => {
    docs.serve('/oauth/client.json', { json: clientDocument(clientId, { grant_types: undefined }) });
    await start();
    const token = await documentClientTokens(t, clientId);
    expect(token.refresh_token).toBeTruthy();
    const refresh = await t.agent
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: token.refresh_token, client_id: clientId });
    expect(refresh.status).toBe(200);
  });

  it('cannot start the device flow: unauthorized_client, not a server error', async () => {
    await start();
    const res = await t.agent.post('/oauth/device_authorization').type('form').send({ client_id: clientId });
    expectOAuthError(res, 'unauthorized_client');
  });

  it('is refused at the consent decision when its document dropped the redirect URI meanwhile', async () => {
    let now = Date.now();
    t = await createTestApp({
      scopes: { realms: 'See your realms' },
      clock: () => now,
      clientMetadataDocuments: { allowLoopbackOrigins: [docs.origin], ca: [docs.ca] },
    });
    const consent = await authorizeWithLogin(t, query());
    expect(consent.status).toBe(200);
    docs.serve('/oauth/client.json', {
      json: clientDocument(clientId, { redirect_uris: ['https://desk.example/oauth/callback'] }),
    });
    now += 61_000;
    const res = await answerConsent(t, consent.text, 'allow');
    expect(res.status).toBe(403);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('no longer registered as it was');
  });
});

describe('what a document may say', () => {
  it('unknown fields and grant types are ignored (jwt-bearer); a jwt-bearer token request is unsupported_grant_type', async () => {
    docs.serve('/oauth/client.json', {
      json: clientDocument(clientId, {
        grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:jwt-bearer'],
        software_id: 'claude',
        logo_uri: 'https://desk.example/logo.png',
        x_vendor_extension: { nested: [1, 2, 3] },
      }),
    });
    await start();
    expect((await t.agent.get('/oauth/authorize').query(query())).status).toBe(200);
    const jwt = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: 'x.y.z',
      client_id: clientId,
    });
    expectOAuthError(jwt, 'unsupported_grant_type');
  });

  it('understands the plural token_endpoint_auth_methods_supported (Metadata Choices) with none among them', async () => {
    const plural = clientDocument(clientId, {
      token_endpoint_auth_methods_supported: ['private_key_jwt', 'none'],
    });
    delete plural.token_endpoint_auth_method;
    docs.serve('/oauth/client.json', { json: plural });
    await start();
    expect((await t.agent.get('/oauth/authorize').query(query())).status).toBe(200);
  });

  it('a 12 KiB document (redirect URIs, keys, names in many languages) is accepted with the default size cap', async () => {
    // As real ones grow: the most redirect URIs allowed, a JWKS, fields translated (RFC 7591 2.2).
    const redirectUris = Array.from(
      { length: 19 },
      (_, i) => `https://desk-${i}.agents.example/oauth/callback`,
    );
    const key = (kid: string) => ({
      kty: 'RSA',
      kid,
      use: 'sig',
      alg: 'RS256',
      e: 'AQAB',
      n: 'x'.repeat(683),
    });
    const translated = Object.fromEntries(
      [
        'de',
        'es',
        'fr',
        'it',
        'ja',
        'ko',
        'nl',
        'pl',
        'pt',
        'sv',
        'tr',
        'uk',
        'zh',
        'cs',
        'da',
        'fi',
        'nb',
        'hu',
        'ro',
        'el',
      ].map((lang) => [`client_description#${lang}`, `Agent Desk (${lang}): `.padEnd(400, '.')]),
    );
    const large = clientDocument(clientId, {
      redirect_uris: ['http://localhost/callback', ...redirectUris],
      jwks: { keys: ['a', 'b', 'c', 'd'].map(key) },
      ...translated,
    });
    expect(Buffer.byteLength(JSON.stringify(large))).toBeGreaterThan(12 * 1024);
    docs.serve('/oauth/client.json', { json: large });
    await start();
    const last = query({ redirect_uri: redirectUris.at(-1)! });
    expect((await t.agent.get('/oauth/authorize').query(last)).status).toBe(200);
  });

  it('limits the scopes to those it names and the server offers', async () => {
    docs.serve('/oauth/client.json', { json: clientDocument(clientId, { scope: 'realms admin' }) });
    await start();
    expect((await t.agent.get('/oauth/authorize').query(query())).status).toBe(200);
    expect((await t.storage.clients.find(clientId))?.scopes).toEqual(['realms']);
  });
});

describe('trust policy', () => {
  it('refuseHosts and allowHosts refuse before any fetch', async () => {
    await start({ refuseHosts: ['127.0.0.1'] });
    const res = await t.agent.get('/oauth/authorize').query(query());
    expect(res.status).toBe(400);
    expect(res.text).toContain('not accepted here');
    await t.close();
    await start({ allowHosts: ['*.desk.example'] });
    expect((await t.agent.get('/oauth/authorize').query(query())).status).toBe(400);
    expect(docs.requests('/oauth/client.json')).toBe(0);
  });

  it('acceptDocument is given the validated document and may refuse it', async () => {
    const seen: unknown[] = [];
    await start({
      acceptDocument: (doc: { clientName: string; redirectUris: string[] }) => {
        seen.push(doc);
        return doc.clientName !== 'Agent Desk';
      },
    });
    const res = await t.agent.get('/oauth/authorize').query(query());
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(seen).toMatchObject([{ clientId, clientName: 'Agent Desk', redirectUris: expect.any(Array) }]);
    expect(await t.storage.clients.find(clientId)).toBeNull();
    expect(events.find((e) => e.type === 'client_document.refused')).toMatchObject({ reason: 'policy' });
  });

  it('never replaces a client the operator registered under the URL, and never fetches for it', async () => {
    await start();
    await registerClient(t.storage, {
      clientId,
      applicationName: 'The operator’s own',
      redirectUri: 'https://operator.example/cb',
      public: true,
      scopes: ['realms'],
    });
    const res = await t.agent.get('/oauth/authorize').query(query());
    expect(res.status).toBe(400);
    const own = await t.agent
      .get('/oauth/authorize')
      .query(query({ redirect_uri: 'https://operator.example/cb' }));
    expect(own.status).toBe(200);
    expect(docs.requests('/oauth/client.json')).toBe(0);
    expect((await t.storage.clients.find(clientId))?.applicationName).toBe('The operator’s own');
  });
});

describe('a document client no token was issued to', () => {
  it('is removed by prune after a day; one that got a token stays', async () => {
    await start();
    const now = Date.now();
    expect((await t.agent.get('/oauth/authorize').query(query())).status).toBe(200);
    const stored = await t.storage.clients.find(clientId);
    expect(stored?.unusedExpiresAt).toBeGreaterThan(now);
    expect((await t.storage.prune!(now + 3_600_000)).clients ?? 0).toBe(0);
    expect(await t.storage.clients.find(clientId)).not.toBeNull();
    const used = `${docs.origin}/used/client.json`;
    docs.serve('/used/client.json', { json: clientDocument(used) });
    await documentClientTokens(t, used, () => {});
    expect((await t.storage.clients.find(used))?.unusedExpiresAt ?? null).toBeNull();
    expect((await t.storage.prune!(now + 2 * 86_400_000)).clients).toBe(1);
    expect(await t.storage.clients.find(clientId)).toBeNull();
    expect(await t.storage.clients.find(used)).not.toBeNull();
  });
});

describe('with the option off', () => {
  it('a URL client_id is an unknown client, nothing is fetched, and the metadata does not change', async () => {
    t = await createTestApp({ scopes: { realms: 'See your realms' } });
    const res = await t.agent.get('/oauth/authorize').query(query());
    expect(res.status).toBe(400);
    expect(res.text).toContain('not registered here');
    const token = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code: 'x',
      client_id: clientId,
      redirect_uri: 'http://localhost/callback',
    });
    expectOAuthError(token, 'invalid_client', 401);
    const metadata = await t.agent.get('/.well-known/oauth-authorization-server');
    expect(metadata.body).not.toHaveProperty('client_id_metadata_document_supported');
    expect(docs.requests('/oauth/client.json')).toBe(0);
  });

  it('a client made from a document before the option was turned off is not registered any more', async () => {
    await start();
    const first = await t.agent.get('/oauth/authorize').query(query());
    expect(first.status).toBe(200);
    expect((await t.storage.clients.find(clientId))?.registeredVia).toBe('document');
    // Another instance on the same storage, with documents off.
    const off = createAuthorizationServer({ ...t.server.options, clientMetadataDocuments: undefined });
    const app = express().use(authorizeRouter(off));
    const res = await supertest(app).get('/oauth/authorize').query(query());
    expect(res.status).toBe(400);
    expect(res.text).toContain('not registered here');
    expect(res.headers.location).toBeUndefined();
  });

  it('with it on, the metadata says so, and none is among the token endpoint methods', async () => {
    await start();
    const metadata = await t.agent.get('/.well-known/oauth-authorization-server');
    expect(metadata.body.client_id_metadata_document_supported).toBe(true);
    expect(metadata.body.token_endpoint_auth_methods_supported).toContain('none');
  });
});
