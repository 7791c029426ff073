/**
 * Clients made from metadata documents in the SQL adapters (issue 39): kept as `registeredVia:
 * 'document'` rows, made once however many first uses race, found by the token store's join, and
 * shared by instances, each with its own cache, that update the row when the document changed and
 * never touch a client the operator registered under the URL.
 */
import express from 'express';
import supertest from 'supertest';
import { afterAll, afterEach, beforeEach, describe, expect } from 'vitest';
import {
  authorizeRouter,
  createAuthorizationServer,
  registerClient,
  type ServerEvent,
} from '../../src/index.js';
import { type SqlStorage } from '../../src/storage/index.js';
import { appOnFreshDatabase, itOn, sqlEngines, type SqlEngine } from '../support/databases.js';
import {
  clientDocument,
  documentClientQuery,
  documentClientTokens,
  startDocumentServer,
  type DocumentServer,
} from '../support/document-server.js';

const { engines, cleanup } = await sqlEngines('client-documents');
afterAll(cleanup);

let docs: DocumentServer;
let clientId: string;
beforeEach(async () => {
  docs = await startDocumentServer();
  clientId = `${docs.origin}/mcp/client.json`;
  docs.serve('/mcp/client.json', { json: clientDocument(clientId), delayMs: 200 });
});
afterEach(() => docs.close());

const documentOptions = () => ({ allowLoopbackOrigins: [docs.origin], ca: [docs.ca] });

/** A second instance of the server on the same database: its own cache, its own fetches. */
function secondInstance(storage: SqlStorage) {
  const server = createAuthorizationServer({
    baseUrl: 'http://127.0.0.1:1',
    storage,
    providers: [{ name: 'Development provider', identifier: 'http://127.0.0.1:2/' }],
    session: { secret: 'a test session secret that is long enough' },
    scopes: { realms: 'See your realms' },
    logger: { warn: () => {}, error: () => {} },
    clientMetadataDocuments: documentOptions(),
  });
  const events: ServerEvent[] = [];
  server.events.on('*', (event) => void events.push(event));
  return { agent: supertest(express().use(authorizeRouter(server))), events };
}

describe.each(engines)('$name', (engine: SqlEngine) => {
  const database = appOnFreshDatabase(engine);
  const start = () =>
    database.start((storage) => ({
      storage,
      scopes: { realms: 'See your realms' },
      clientMetadataDocuments: documentOptions(),
    }));

  itOn(engine)('20 racing first uses make one row; its tokens work through the join', async () => {
    const t = await start();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => t.agent.get('/oauth/authorize').query(documentClientQuery(clientId))),
    );
    for (const res of answers) expect(res.status).toBe(200);
    expect(docs.requests('/mcp/client.json')).toBe(1);
    const rows = (await t.storage.clients.list!()).filter((c) => c.clientId === clientId);
    expect(rows).toMatchObject([
      { registeredVia: 'document', secretHash: null, applicationName: 'Agent Desk' },
    ]);

    const tokens = await documentClientTokens(t, clientId);
    const api = await t.agent.get('/v1/realms').set('authorization', `Bearer ${tokens.access_token}`);
    expect(api.status).toBe(200);
  });

  itOn(engine)('another instance finds the row, and updates it when the document changed', async () => {
    const t = await start();
    expect((await t.agent.get('/oauth/authorize').query(documentClientQuery(clientId))).status).toBe(200);
    docs.serve('/mcp/client.json', { json: clientDocument(clientId, { client_name: 'Agent Desk Pro' }) });
    const other = secondInstance(t.storage as SqlStorage);
    expect((await other.agent.get('/oauth/authorize').query(documentClientQuery(clientId))).status).toBe(200);
    expect(docs.requests('/mcp/client.json')).toBe(2);
    const rows = (await t.storage.clients.list!()).filter((c) => c.clientId === clientId);
    expect(rows).toMatchObject([{ applicationName: 'Agent Desk Pro', registeredVia: 'document' }]);
    expect(other.events.find((e) => e.type === 'client_document.saved')).toMatchObject({ created: false });
  });

  itOn(engine)('two instances racing on a first use make one row, and both answer', async () => {
    const t = await start();
    const other = secondInstance(t.storage as SqlStorage);
    const [here, there] = await Promise.all([
      t.agent.get('/oauth/authorize').query(documentClientQuery(clientId)),
      other.agent.get('/oauth/authorize').query(documentClientQuery(clientId)),
    ]);
    expect([here.status, there.status]).toEqual([200, 200]);
    expect(docs.requests('/mcp/client.json')).toBe(2);
    const rows = (await t.storage.clients.list!()).filter((c) => c.clientId === clientId);
    expect(rows).toHaveLength(1);
  });

  itOn(engine)('an operator-disabled document client stays disabled and is not fetched', async () => {
    const t = await start();
    expect((await t.agent.get('/oauth/authorize').query(documentClientQuery(clientId))).status).toBe(200);
    await t.storage.clients.update!(clientId, { disabled: true });
    const res = await t.agent.get('/oauth/authorize').query(documentClientQuery(clientId));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    docs.serve('/mcp/client.json', { json: clientDocument(clientId, { client_name: 'Renamed' }) });
    const other = secondInstance(t.storage as SqlStorage);
    expect((await other.agent.get('/oauth/authorize').query(documentClientQuery(clientId))).status).toBe(400);
    expect(docs.requests('/mcp/client.json')).toBe(1);
    expect(await t.storage.clients.find(clientId)).toMatchObject({
      disabled: true,
      applicationName: 'Agent Desk',
    });
  });

  itOn(engine)('a client the operator registered under the URL is used as registered', async () => {
    const t = await start();
    await registerClient(t.storage, {
      clientId,
      applicationName: 'Registered by hand',
      redirectUri: 'http://127.0.0.1/callback',
      public: true,
      scopes: ['realms'],
    });
    const res = await t.agent.get('/oauth/authorize').query(documentClientQuery(clientId));
    expect(res.status).toBe(400);
    expect(docs.requests('/mcp/client.json')).toBe(0);
    const row = await t.storage.clients.find(clientId);
    expect(row?.applicationName).toBe('Registered by hand');
    expect(row?.registeredVia ?? 'operator').toBe('operator');
  });
});
