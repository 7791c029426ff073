import assert from 'node:assert/strict';
import { runBatch } from '../../grants/batch.js';
import type { BatchOperation } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal, isNull, oneWinner, race } from './check.js';
import {
  HOUR,
  RACERS,
  accessTokenRecord,
  clientRecord,
  freshId,
  grantRecord,
  refreshTokenRecord,
} from './fixtures.js';

/**
 * The optional `storage.batch`, or, for an adapter without it, the one-by-one calls the library
 * makes instead (`runBatch`): results in order, each operation with its method's guarantee,
 * single use under races. Both paths must pass the same checks, so these tests run for every
 * adapter; the library rules run over both paths too (see `describeStorageConformance`).
 */
export function batchTests(suite: ConformanceSuite): void {
  const { describe, it, storage, putClient } = suite;
  const batch = (operations: readonly BatchOperation[]) => runBatch(storage(), operations);
  const now = () => Date.now();

  describe('storage.batch (optional; without it, the same operations one by one)', () => {
    it('resolves each operation as its method would, in order, and each takes effect', async () => {
      const t = now();
      const token = accessTokenRecord(t, grantRecord(t));
      const code = freshId('batch-code');
      const marker = freshId('batch-marker');
      const written = freshId('batch-set');
      await storage().ephemeral.set(code, 'the code', t + HOUR, t);
      await storage().ephemeral.set(written, 'old', t + HOUR, t);
      const results = await batch([
        { op: 'tokens.save', token },
        { op: 'ephemeral.set', key: written, value: 'new', expiresAt: t + HOUR, now: t },
        { op: 'ephemeral.take', key: code, now: t },
        { op: 'ephemeral.add', key: marker, value: 'm', expiresAt: t + HOUR, now: t },
      ]);
      assert.deepStrictEqual(
        results,
        [undefined, undefined, 'the code', true],
        'storage.batch must resolve [undefined for tokens.save and ephemeral.set, the taken value, true for a won add], in order',
      );
      equal(
        await storage().ephemeral.get(written, t),
        'new',
        'storage.batch: a key set in a batch must hold the value set, over the one before',
      );
      const found = await storage().tokens.find(token.tokenHash);
      equal(found?.token.tokenHash, token.tokenHash, 'storage.batch: a token saved in a batch must be found');
      isNull(await storage().ephemeral.get(code, t), 'storage.batch: a key taken in a batch must be gone');
      equal(
        await storage().ephemeral.get(marker, t),
        'm',
        'storage.batch: a key added in a batch must be stored',
      );
      const again = await batch([
        { op: 'ephemeral.take', key: code, now: t },
        { op: 'ephemeral.add', key: marker, value: 'n', expiresAt: t + HOUR, now: t },
      ]);
      assert.deepStrictEqual(
        again,
        [null, false],
        'storage.batch: a take of a taken key must resolve null, an add of a live key false',
      );
    });

    it('saves a token from a refresh token of the client (tokens.saveFrom), and from nothing else', async () => {
      const t = now();
      const grant = grantRecord(t);
      const refresh = refreshTokenRecord(t, grant, { scopes: ['realms:read', 'profile'] });
      const access = accessTokenRecord(t, grant);
      await storage().tokens.save(refresh);
      await storage().tokens.save(access);
      const made = (tokenHash: string) => ({
        tokenHash,
        type: 'access_token' as const,
        createdAt: t,
        expiresAt: t + HOUR,
        origin: 'refresh_token' as const,
        rotatedAt: null,
      });
      const [fromRefresh, fromAccess, fromOtherClient, fromNothing] = [
        freshId('from-refresh'),
        freshId('from-access'),
        freshId('from-other'),
        freshId('from-nothing'),
      ];
      const results = await batch([
        {
          op: 'tokens.saveFrom',
          from: refresh.tokenHash,
          clientId: grant.clientId,
          token: made(fromRefresh),
        },
        { op: 'tokens.saveFrom', from: access.tokenHash, clientId: grant.clientId, token: made(fromAccess) },
        {
          op: 'tokens.saveFrom',
          from: refresh.tokenHash,
          clientId: freshId('other'),
          token: made(fromOtherClient),
        },
        {
          op: 'tokens.saveFrom',
          from: freshId('absent'),
          clientId: grant.clientId,
          token: made(fromNothing),
        },
      ]);
      assert.deepStrictEqual(
        results,
        [true, false, false, false],
        'storage.batch: tokens.saveFrom must resolve true only when `from` is a refresh token of `clientId`',
      );
      const saved = await storage().tokens.find(fromRefresh);
      assert.deepStrictEqual(
        saved?.token,
        {
          ...made(fromRefresh),
          clientId: grant.clientId,
          userId: grant.userId,
          grantId: grant.grantId,
          scopes: refresh.scopes,
        },
        "storage.batch: tokens.saveFrom must save the token with the refresh token's client, user, grant and scopes",
      );
      for (const hash of [fromAccess, fromOtherClient, fromNothing]) {
        isNull(
          await storage().tokens.find(hash),
          'storage.batch: tokens.saveFrom that resolves false must save nothing',
        );
      }
    });

    it('reads as its methods read: a client, a token with its grant and client, a grant, an entry', async () => {
      const t = now();
      const client = clientRecord(t);
      await putClient(client);
      const grant = grantRecord(t, { clientId: client.clientId });
      await storage().grants.save(grant);
      const token = accessTokenRecord(t, grant);
      await storage().tokens.save(token);
      const key = freshId('batch-get');
      await storage().ephemeral.set(key, 'live', t + HOUR, t);
      const read = await batch([
        { op: 'clients.find', clientId: client.clientId },
        { op: 'tokens.find', tokenHash: token.tokenHash },
        { op: 'grants.find', userId: grant.userId, clientId: grant.clientId },
        { op: 'ephemeral.get', key, now: t },
        { op: 'ephemeral.get', key: freshId('batch-absent'), now: t },
        { op: 'clients.find', clientId: freshId('no-client') },
        { op: 'tokens.find', tokenHash: freshId('no-token') },
        { op: 'grants.find', userId: freshId('no-user'), clientId: client.clientId },
      ]);
      const expected = [
        await storage().clients.find(client.clientId),
        await storage().tokens.find(token.tokenHash),
        (await storage().grants.list({ userId: grant.userId, clientId: grant.clientId }))[0],
        'live',
        null,
        null,
        null,
        null,
      ];
      assert.deepStrictEqual(
        read,
        expected,
        'storage.batch: clients.find, tokens.find, grants.find and ephemeral.get in a batch must resolve what the methods resolve (null when absent)',
      );
      const [byBatch] = await runBatch(storage(), [{ op: 'tokens.find', tokenHash: token.tokenHash }]);
      equal(byBatch?.grant?.grantId, grant.grantId, "storage.batch: tokens.find must join the token's grant");
      equal(
        byBatch?.client?.clientId,
        client.clientId,
        "storage.batch: tokens.find must join the token's client",
      );
    });

    it(`gives a taken value to exactly one of ${RACERS} racing batches, each saving its own token`, async () => {
      const t = now();
      const grant = grantRecord(t);
      const code = freshId('batch-race');
      await storage().ephemeral.set(code, 'once', t + HOUR, t);
      const results = await race('storage.batch', RACERS, () =>
        batch([
          { op: 'tokens.save', token: accessTokenRecord(t, grant) },
          { op: 'ephemeral.take', key: code, now: t },
        ]),
      );
      oneWinner(
        results.map((r) => r[1]),
        'once',
        null,
        `storage.batch: of ${RACERS} racing batches taking one key, exactly one must receive its value`,
      );
    });

    it(`adds a key for exactly one of ${RACERS} racing batches`, async () => {
      const t = now();
      const key = freshId('batch-add');
      const results = await race('storage.batch', RACERS, (i) =>
        batch([{ op: 'ephemeral.add', key, value: String(i), expiresAt: t + HOUR, now: t }]),
      );
      oneWinner(
        results.map((r) => r[0]),
        true,
        false,
        `storage.batch: of ${RACERS} racing batches adding one key, exactly one must resolve true`,
      );
    });
  });
}
