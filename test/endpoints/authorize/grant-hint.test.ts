import { afterAll, describe, expect } from 'vitest';
import { recordConsent, revokeGrant } from '../../../src/grants/index.js';
import { CODE_REDIRECT, IMPLICIT_REDIRECT, type TestApp } from '../../support/app.js';
import { appOnFreshDatabase, itOn, recordingBatches, sqlEngines } from '../../support/databases.js';
import { answerConsent, exchangeCode, obtainCode } from '../../support/flow.js';

/**
 * A signed-in user's authorization reads the session with the client in one batch, then the
 * user's grant with the code stored under the grant the session last saw in another: two round
 * trips on PostgreSQL. The code goes out only when the grant read is that very grant, standing and
 * covering the scopes; otherwise nobody ever sees it. On PostgreSQL, whose batch is one round trip
 * (`batchSavesRoundTrips`); SQLite, with no round trips to save, reads and writes as before.
 */
const { engines, cleanup } = await sqlEngines('grant-hint');
afterAll(cleanup);
const postgres = engines.filter((engine) => engine.name === 'PostgreSQL');
const sqlite = engines.find((engine) => engine.name === 'SQLite')!;

const query = {
  response_type: 'code',
  client_id: 'code-client',
  redirect_uri: CODE_REDIRECT,
  state: 'again',
};

describe('SQLite: nothing written ahead', () => {
  const app = appOnFreshDatabase(sqlite);

  itOn(sqlite)("the client with the user's grant in one batch of reads, then the code alone", async () => {
    let recorded!: ReturnType<typeof recordingBatches>;
    const t = await app.start((storage) => {
      expect(storage.batchSavesRoundTrips).toBeUndefined();
      recorded = recordingBatches(storage);
      return { storage: recorded.storage };
    });
    await obtainCode(t);
    recorded.batches.length = 0;
    const res = await t.agent.get('/oauth/authorize').query(query);
    expect(res.status).toBe(302);
    expect(recorded.ops()).toEqual([['clients.find', 'grants.find']]);
    expect((await exchangeCode(t, new URL(res.headers.location!).searchParams.get('code')!)).status).toBe(
      200,
    );
  });
});

describe.each(postgres)('the grant the session last saw, $name', (engine) => {
  const test = itOn(engine);
  const app = appOnFreshDatabase(engine);

  /** The app on a fresh database, its batches and its codes handed out recorded. */
  async function start() {
    let recorded!: ReturnType<typeof recordingBatches>;
    const t = await app.start((storage) => {
      recorded = recordingBatches(storage);
      return { storage: recorded.storage };
    });
    const { batches, ops } = recorded;
    const issued: string[] = [];
    t.server.events.on('code.issued', (event) => void issued.push(event.grantId));
    const { code } = await obtainCode(t);
    const [grant] = await t.server.storage.grants.list({ clientId: 'code-client' });
    expect(grant?.revokedAt).toBeNull();
    return { t, code, grant: grant!, batches, ops, issued };
  }

  /** The session with the client, then the code written ahead with the grant's read. */
  const TWO_ROUND_TRIPS = [
    ['ephemeral.get', 'clients.find'],
    ['ephemeral.set', 'grants.find'],
  ];
  const authorize = (app: TestApp) => app.agent.get('/oauth/authorize').query(query);
  const codeOf = (location: string) => new URL(location).searchParams.get('code')!;

  test('a trusted client: the session with the client, then the grant with the code', async () => {
    const { t, batches, ops, issued, grant } = await start();
    batches.length = 0;
    const res = await authorize(t);
    expect(res.status).toBe(302);
    expect(ops()).toEqual(TWO_ROUND_TRIPS);
    expect(issued.at(-1)).toBe(grant.grantId);
    expect((await exchangeCode(t, codeOf(res.headers.location!))).status).toBe(200);
  });

  test('a grant revoked since: the code written ahead is not handed out, the consent page is', async () => {
    const { t, batches, ops, issued, grant } = await start();
    await revokeGrant(t.server, grant);
    const handedOut = issued.length;
    batches.length = 0;
    const res = await authorize(t);
    expect(res.status).toBe(200);
    expect(res.text).toContain('decision');
    expect(res.headers.location).toBeUndefined();
    expect(ops()).toEqual(TWO_ROUND_TRIPS);
    expect(issued.length).toBe(handedOut);
    // The hint is forgotten: the next request writes nothing ahead under the revoked grant.
    batches.length = 0;
    expect((await authorize(t)).status).toBe(200);
    expect(ops()).toEqual([['ephemeral.get', 'clients.find']]);
  });

  test('a grant given again elsewhere (another grant id): the code is issued under it, and the session learns it', async () => {
    const { t, batches, ops, issued, grant } = await start();
    await revokeGrant(t.server, grant);
    const again = await recordConsent(t.server, grant.userId, 'code-client', grant.scopes);
    expect(again.grantId).not.toBe(grant.grantId);

    batches.length = 0;
    const first = await authorize(t);
    expect(first.status).toBe(302);
    expect(issued.at(-1)).toBe(again.grantId);
    // The code written ahead under the old grant is not the one handed out; this one works.
    expect((await exchangeCode(t, codeOf(first.headers.location!))).status).toBe(200);
    expect(ops()[1]).toEqual(['ephemeral.set', 'grants.find']);

    batches.length = 0;
    const second = await authorize(t);
    expect(second.status).toBe(302);
    expect(ops()).toEqual(TWO_ROUND_TRIPS);
    expect(issued.at(-1)).toBe(again.grantId);
  });

  test('a grant narrowed below the scopes asked for: no code, the consent page', async () => {
    const { t, issued, grant, batches, ops } = await start();
    await t.server.storage.grants.save({ ...grant, scopes: [], updatedAt: Date.now() });
    const handedOut = issued.length;
    batches.length = 0;
    const res = await authorize(t).query({ scope: grant.scopes.join(' ') || 'realms' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('decision');
    expect(ops()[1]).toEqual(['ephemeral.set', 'grants.find']);
    expect(issued.length).toBe(handedOut);
  });

  test('an implicit token is not written ahead: the grant is read, then the token saved', async () => {
    const { t, batches, ops } = await start();
    // The implicit client trusted once, so the session holds a hint for it too.
    const implicitQuery = {
      response_type: 'token',
      client_id: t.implicitClient.clientId,
      redirect_uri: IMPLICIT_REDIRECT,
      state: 'i',
    };
    let res = await t.agent.get('/oauth/authorize').query(implicitQuery);
    if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
    expect(new URL(res.headers.location!).hash).toContain('access_token=');
    batches.length = 0;
    res = await t.agent.get('/oauth/authorize').query(implicitQuery);
    expect(new URL(res.headers.location!).hash).toContain('access_token=');
    expect(ops()).toEqual([['ephemeral.get', 'clients.find']]);
  });

  test('a client named by nobody registered: an error page after one read with the session', async () => {
    const { t, ops, batches } = await start();
    batches.length = 0;
    const res = await t.agent.get('/oauth/authorize').query({ ...query, client_id: 'nobody' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('not registered');
    expect(ops()).toEqual([['ephemeral.get', 'clients.find']]);
  });
});
