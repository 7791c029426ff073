import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ownReader, readRows } from '../../storage/read.js';
import type { StorageRead } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { isNull, sameRecord } from './check.js';
import {
  HOUR,
  accessTokenRecord,
  clientRecord,
  enrolled,
  freshHash,
  freshId,
  grantRecord,
} from './fixtures.js';

/**
 * `Storage.reader`, as the library uses it: the reads of the load step (a client, ephemeral keys,
 * a token) answer exactly as the stores' own methods do, keyed by name. With a reader that reads
 * the storage's own stores this checks the reader; without one (or with one of other stores, as a
 * storage spread by hand keeps: compose with `composeStorage`) the library reads one by one, and
 * the test says so.
 */
export function readerTests(suite: ConformanceSuite): void {
  const { describe, it, storage, putClient } = suite;

  /** The reads of `request` one by one, through the stores' own methods. */
  async function oneByOne(request: StorageRead, now: number) {
    const store = storage();
    return {
      client: request.client === undefined ? null : await store.clients.find(request.client),
      ephemeral: Object.fromEntries(
        await Promise.all(
          (request.ephemeral ?? []).map(async (key) => [key, await store.ephemeral.get(key, now)] as const),
        ),
      ),
      token: request.token === undefined ? null : await store.tokens.find(request.token),
      grant: null,
    };
  }

  describe('reads together (Storage.reader)', () => {
    it('the load step reads a client, ephemeral keys and a token as the stores answer them', async () => {
      const how =
        ownReader(storage()) !== undefined
          ? 'Storage.reader.read'
          : 'the library (no reader of these stores: one by one)';
      const now = Date.now();
      const { client, grant } = await enrolled(suite, now);
      const token = accessTokenRecord(now, grant);
      await storage().tokens.save(token);
      const [live, expired, absent] = [freshId('live'), freshId('expired'), freshId('absent')];
      await storage().ephemeral.set(live, 'the "value" \u00e9\u{1F511}', now + HOUR, now);
      // Expired by the clock and by a store's own expiry (Redis): the wait is real.
      const expiresAt = now + 300;
      await storage().ephemeral.set(expired, 'gone', expiresAt, now);
      await sleep(Math.max(0, expiresAt + 150 - Date.now()));
      const request = { client: client.clientId, ephemeral: [live, expired, absent], token: token.tokenHash };
      const later = Date.now();

      const together = await readRows(storage(), request, later);
      const expected = await oneByOne(request, later);
      sameRecord(together.client, client, `${how}: client must be the client, as clients.find reads it`);
      assert.deepStrictEqual(
        together.ephemeral,
        { [live]: 'the "value" \u00e9\u{1F511}', [expired]: null, [absent]: null },
        `${how}: ephemeral must be each key's value as ephemeral.get reads it at now, keyed by the key ` +
          `(live, expired at now, absent); received ${JSON.stringify(together.ephemeral)}`,
      );
      assert.deepStrictEqual(
        together,
        expected,
        `${how}: must answer as clients.find, ephemeral.get, tokens.find`,
      );
      sameRecord(together.token?.token, token, `${how}: token must be the token, as tokens.find reads it`);
      sameRecord(
        together.token?.grant,
        grant,
        `${how}: token.grant must be its grant, as tokens.find joins it`,
      );
    });

    it('grantOf: the grant an entry names (a code), read with it; null when it names another or none; grant: of a user and client', async () => {
      const how = ownReader(storage()) !== undefined ? 'Storage.reader.read' : 'the library';
      const now = Date.now();
      const { client, grant } = await enrolled(suite, now);
      const names = (grantId: string) =>
        JSON.stringify({ clientId: client.clientId, userId: grant.userId, grantId });
      const [code, stale, absent] = [freshId('code'), freshId('code'), freshId('code')];
      await storage().ephemeral.set(code, names(grant.grantId), now + HOUR, now);
      await storage().ephemeral.set(stale, names(freshId('grant')), now + HOUR, now);
      const read = (key: string) =>
        readRows(storage(), { client: client.clientId, ephemeral: [key], grantOf: key }, now);
      const together = await read(code);
      sameRecord(
        together.grant,
        grant,
        `${how}: grant must be the grant the entry names, as grants.list reads it`,
      );
      sameRecord(together.client, client, `${how}: client must be read with it`);
      isNull(
        (await read(stale)).grant,
        `${how}: an entry naming a grant id that is not the user's and client's must read null`,
      );
      isNull((await read(absent)).grant, `${how}: an absent entry names no grant: null`);
      const pair = { userId: grant.userId, clientId: client.clientId };
      const byPair = await readRows(storage(), { client: client.clientId, grant: pair }, now);
      sameRecord(byPair.grant, grant, `${how}: grant must be the grant of the user and client named`);
      const nobody = { userId: freshId('user'), clientId: client.clientId };
      isNull((await readRows(storage(), { grant: nobody }, now)).grant, `${how}: no grant of the pair: null`);
      // The same user at another client has no grant: a reader matching the user alone would let
      // the authorization skip consent for every client once the user trusted one.
      const elsewhere = { userId: grant.userId, clientId: freshId('client') };
      isNull(
        (await readRows(storage(), { grant: elsewhere }, now)).grant,
        `${how}: the user's grant at another client is not the grant of this pair: null`,
      );
      // And the user's grant at another client is not this one's, nor the other way round.
      const other = clientRecord(now);
      await putClient(other);
      await storage().grants.save(grantRecord(now, { clientId: other.clientId, userId: grant.userId }));
      const mine = await readRows(storage(), { grant: pair }, now);
      sameRecord(
        mine.grant,
        grant,
        `${how}: with the user's grant at another client saved, still this pair's`,
      );
    });

    it('a read not asked for, an unknown client and an unknown token are null', async () => {
      const how = ownReader(storage()) !== undefined ? 'Storage.reader.read' : 'the library';
      const now = Date.now();
      const nothing = await readRows(storage(), {}, now);
      assert.deepStrictEqual(
        nothing,
        { client: null, ephemeral: {}, token: null, grant: null },
        `${how}({}) must read nothing: { client: null, ephemeral: {}, token: null, grant: null }`,
      );
      const unknown = await readRows(storage(), { client: freshId('client'), token: freshHash() }, now);
      isNull(unknown.client, `${how}: an unknown client must be null`);
      isNull(unknown.token, `${how}: an unknown token must be null`);
    });
  });
}
