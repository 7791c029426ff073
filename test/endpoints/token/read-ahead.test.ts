import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { memoryStorage, type EphemeralStore, type Storage } from '../../../src/index.js';
import { runEach } from '../../../src/storage/batch.js';
import { hashSecret } from '../../../src/crypto/secrets.js';
import { revokeGrant } from '../../../src/grants/index.js';
import { readAhead } from '../../../src/storage/read-ahead.js';
import { CODE_REDIRECT, createTestApp, expectOAuthError, type TestApp } from '../../support/app.js';
import { appOnFreshDatabase, itOn, recordingBatches, sqlEngines } from '../../support/databases.js';
import { exchangeCode, obtainCode, obtainTokens, refreshWith } from '../../support/flow.js';

/**
 * A token request reads its client, its rate-limit counters and the code or refresh token it
 * presents at once, in one `storage.batch` (one round trip on PostgreSQL), and the steps after
 * read those rows from that batch: on both SQL engines, whose adapters have a batch.
 */
const { engines, cleanup } = await sqlEngines('read-ahead');
afterAll(cleanup);

describe.each(engines)('reads made ahead, $name', (engine) => {
  const test = itOn(engine);
  const app = appOnFreshDatabase(engine);
  let t: TestApp | undefined;

  /** The app on a fresh database, with every batch and every separate `clients.find` recorded. */
  async function start(rateLimit = { maxFailuresPerClient: 2, maxFailuresPerAddress: 10 }) {
    let finds = 0;
    let recorded!: ReturnType<typeof recordingBatches>;
    t = await app.start((storage) => {
      recorded = recordingBatches(storage);
      const find = (id: string) => (finds++, storage.clients.find(id));
      return { storage: { ...recorded.storage, clients: { ...storage.clients, find } }, rateLimit };
    });
    return { batches: recorded.batches, finds: () => finds };
  }

  const grantsReadAhead = [
    {
      grant: 'a refresh',
      // On PostgreSQL the access token first, saved from the refresh token (handed out once the
      // checks pass); SQLite writes nothing ahead (no round trip to save).
      reads: (name: string) => [
        ...(name === 'PostgreSQL' ? ['tokens.saveFrom'] : []),
        'clients.find',
        'ephemeral.get',
        'ephemeral.get',
        'tokens.find',
      ],
      async request(app: TestApp) {
        const tokens = await obtainTokens(app);
        return () => refreshWith(app, tokens.refresh_token);
      },
    },
    {
      grant: 'a code exchange',
      reads: () => ['clients.find', 'ephemeral.get', 'ephemeral.get', 'ephemeral.get'],
      async request(app: TestApp) {
        const { code } = await obtainCode(app);
        return () => exchangeCode(app, code);
      },
    },
  ];
  for (const { grant, reads, request } of grantsReadAhead) {
    test(`${grant} reads client, rate-limit counters and its code or token in one batch`, async () => {
      const seen = await start();
      const send = await request(t!);
      seen.batches.length = 0;
      const findsBefore = seen.finds();
      expect((await send()).status).toBe(200);
      expect(seen.batches[0]!.map((read) => read.op)).toEqual(reads(engine.name));
      expect(seen.finds()).toBe(findsBefore);
    });
  }

  test("a refresh's access token, saved with the reads, goes out only when every check passes", async () => {
    const seen = await start();
    const tokens = await obtainTokens(t!, { scope: 'realms profile' });
    const stored = async (token: string) => (await t!.storage.tokens.find(hashSecret(token)))?.token;

    // Every check passes and the scopes are the refresh token's own: the token saved ahead.
    seen.batches.length = 0;
    const same = await refreshWith(t!, tokens.refresh_token);
    expect(same.status).toBe(200);
    expect(seen.batches).toHaveLength(1);
    expect((await stored(same.body.access_token))?.scopes).toEqual(['realms', 'profile']);

    // A narrower scope: another token, saved with that scope.
    const narrower = await refreshWith(t!, tokens.refresh_token, { scope: 'realms' });
    expect(narrower.status).toBe(200);
    expect(narrower.body.scope).toBe('realms');
    expect((await stored(narrower.body.access_token))?.scopes).toEqual(['realms']);

    // A wrong secret, or a revoked grant: nothing goes out.
    const wrong = await refreshWith(t!, tokens.refresh_token, { client_secret: 'wrong' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.access_token).toBeUndefined();
    const before = (await stored(same.body.access_token))!;
    await revokeGrant(t!.server, before);
    const revoked = await refreshWith(t!, tokens.refresh_token);
    expectOAuthError(revoked, 'invalid_grant');
    expect(revoked.body.access_token).toBeUndefined();
  });

  test('failures read ahead are counted, and the limit holds for the right secret', async () => {
    await start();
    const { code } = await obtainCode(t!);
    const wrong = () =>
      t!.agent.post('/oauth/token').type('form').send({
        grant_type: 'authorization_code',
        code,
        redirect_uri: CODE_REDIRECT,
        client_id: 'code-client',
        client_secret: 'wrong',
      });
    expect((await wrong()).status).toBe(401);
    expect((await wrong()).status).toBe(401);
    expect((await wrong()).status).toBe(429);
    expect((await exchangeCode(t!, code)).status).toBe(429);
  });

  test('a read made ahead answers once; the same read again sees what was written since', async () => {
    const storage = await app.open();
    const now = Date.now();
    await storage.clients.create({
      clientId: 'c1',
      applicationName: 'One',
      redirectUri: CODE_REDIRECT,
      grantType: 'authorization_code',
      secretHash: 'x',
      scopes: [],
      defaultScopes: null,
      contacts: [],
      disabled: false,
      requirePkce: false,
      createdAt: now,
    });
    await storage.ephemeral.set('k', 'before', now + 60_000, now);
    const view = await readAhead(storage, [
      { op: 'clients.find', clientId: 'c1' },
      { op: 'ephemeral.get', key: 'k', now },
    ]);
    await storage.clients.update('c1', { disabled: true });
    await storage.ephemeral.set('k', 'after', now + 60_000, now);
    expect((await view.clients.find('c1'))?.disabled).toBe(false); // read ahead, before the update
    expect((await view.clients.find('c1'))?.disabled).toBe(true); // read again
    expect(await view.ephemeral.get('k', now)).toBe('before');
    expect(await view.ephemeral.get('k', now)).toBe('after');
    // Everything else is the storage's own.
    expect(await view.grants.list({ userId: 'nobody' })).toEqual([]);
  });
});

describe('reads made ahead, over an adapter whose stores are classes with private fields', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('still writes through the view: a replayed code revokes its grant and its tokens stop working', async () => {
    const memory = memoryStorage();
    class PrivateEphemeral implements EphemeralStore {
      readonly #inner = memory.ephemeral;
      get(key: string, now: number) {
        return this.#inner.get(key, now);
      }
      set(key: string, value: string, expiresAt: number, now: number) {
        return this.#inner.set(key, value, expiresAt, now);
      }
      add(key: string, value: string, expiresAt: number, now: number) {
        return this.#inner.add(key, value, expiresAt, now);
      }
      take(key: string, now: number) {
        return this.#inner.take(key, now);
      }
      increment(key: string, expiresAt: number, now: number) {
        return this.#inner.increment(key, expiresAt, now);
      }
      delete(key: string) {
        return this.#inner.delete(key);
      }
    }
    const storage: Storage = {
      ...memory,
      ephemeral: new PrivateEphemeral(),
      // A batch that runs the operations one by one on this storage's own stores.
      batch(operations) {
        return runEach(this as Storage, operations);
      },
    };
    t = await createTestApp({ storage });
    const failures: unknown[] = [];
    t.server.events.on('server.error', (event) => void failures.push(event.error));
    const { code } = await obtainCode(t);
    const first = await exchangeCode(t, code);
    expect(first.status).toBe(200);
    expectOAuthError(await exchangeCode(t, code), 'invalid_grant');
    const realms = await t.agent.get('/v1/realms').set('Authorization', `Bearer ${first.body.access_token}`);
    expect(realms.status).toBe(401);
    expect(failures).toEqual([]);
  });
});
