import assert from 'node:assert/strict';
import type { PruneResult, Storage, TokenRecord } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { isNull, race } from './check.js';
import {
  DAY,
  HOUR,
  MINUTE,
  SECOND,
  accessTokenRecord,
  clientRecord,
  freshId,
  grantRecord,
  refreshTokenRecord,
} from './fixtures.js';

type Prune = NonNullable<Storage['prune']>;

/** What one scenario stored, split by what prune must do with it. */
interface Scenario {
  deadTokens: TokenRecord[];
  liveTokens: Array<{ token: TokenRecord; why: string }>;
  deadEntries: string[];
  liveEntries: string[];
  deadGrants: Array<{ userId: string; clientId: string }>;
  liveGrants: Array<{ userId: string; clientId: string; why: string }>;
}

/** `storage.prune`: removes exactly what can no longer work, and nothing that still does. */
export function pruneTests(suite: ConformanceSuite): void {
  const { it, storage, putClient, has } = suite;
  const prune = (now: number, options?: Parameters<Prune>[1]) => storage().prune!(now, options);

  /** Stores one of each case, dead and alive, relative to `now`. */
  async function scenario(now: number): Promise<Scenario> {
    const s = storage();
    const client = clientRecord(now);
    const disabled = clientRecord(now, { disabled: true });
    await putClient(client);
    await putClient(disabled);
    const standing = grantRecord(now - DAY, { clientId: client.clientId });
    const recent = grantRecord(now - DAY, { clientId: client.clientId, revokedAt: now - DAY });
    const old = grantRecord(now - 40 * DAY, { clientId: client.clientId, revokedAt: now - 31 * DAY });
    const replacedId = freshId('grant');
    const replaced = grantRecord(now - DAY, { grantId: replacedId, clientId: client.clientId });
    const replacing = { ...replaced, grantId: freshId('grant') };
    const atDisabled = grantRecord(now - DAY, { clientId: disabled.clientId });
    for (const grant of [standing, recent, old, replaced, replacing, atDisabled]) await s.grants.save(grant);

    const liveTokens = [
      { token: accessTokenRecord(now, standing), why: 'an unexpired access token of a standing grant' },
      { token: accessTokenRecord(now - HOUR + 1, standing), why: 'an access token expiring 1 ms after now' },
      {
        token: refreshTokenRecord(now - DAY, standing),
        why: 'a refresh token without expiry of a standing grant',
      },
      {
        token: refreshTokenRecord(now - DAY, standing, { rotatedAt: now - HOUR }),
        why: 'a rotated refresh token of a standing grant (kept: presented again, it reveals a leak)',
      },
      {
        token: accessTokenRecord(now, atDisabled),
        why: 'a token of a disabled client (it works again if the client is enabled)',
      },
    ];
    const deadTokens = [
      accessTokenRecord(now - 2 * HOUR, standing),
      accessTokenRecord(now - HOUR, standing), // expires exactly at now
      refreshTokenRecord(now - DAY, recent),
      accessTokenRecord(now, recent),
      refreshTokenRecord(now - DAY, replaced),
      refreshTokenRecord(now - DAY, { ...standing, grantId: freshId('grant-never-saved') }),
    ];
    if (has('clientAdmin')) {
      const removed = clientRecord(now);
      await s.clients.create!(removed);
      const grant = grantRecord(now - DAY, { clientId: removed.clientId });
      await s.grants.save(grant);
      const token = refreshTokenRecord(now - DAY, grant);
      await s.tokens.save(token);
      await s.clients.remove!(removed.clientId);
      deadTokens.push(token);
    }
    for (const token of [...liveTokens.map((live) => live.token), ...deadTokens]) await s.tokens.save(token);

    const deadEntries = [freshId('prune-dead'), freshId('prune-dead')];
    const liveEntries = [freshId('prune-live'), freshId('prune-live')];
    // Stored as of an hour ago, so that a store with native expiry gets a positive time to live.
    const then = now - HOUR;
    await s.ephemeral.set(deadEntries[0]!, 'dead', now - MINUTE, then);
    await s.ephemeral.set(deadEntries[1]!, 'dead', now, then);
    await s.ephemeral.set(liveEntries[0]!, 'live', now + 1, then);
    await s.ephemeral.set(liveEntries[1]!, 'live', now + HOUR, then);

    return {
      deadTokens,
      liveTokens,
      deadEntries,
      liveEntries,
      deadGrants: [old],
      liveGrants: [
        { ...standing, why: 'a standing grant' },
        { ...recent, why: 'a grant revoked a day ago (kept for the retention, 30 days by default)' },
        { ...replacing, why: 'the grant that replaced another' },
      ],
    };
  }

  async function expectPruned(s: Scenario, now: number, result: PruneResult | undefined): Promise<void> {
    const store = storage();
    for (const token of s.deadTokens) {
      assert.equal(
        await store.tokens.find(token.tokenHash),
        null,
        `prune must delete a token that can no longer work: ${JSON.stringify({ ...token, now })}`,
      );
    }
    for (const { token, why } of s.liveTokens) {
      assert.ok(await store.tokens.find(token.tokenHash), `prune must keep ${why}`);
    }
    for (const key of s.liveEntries) {
      assert.equal(
        await store.ephemeral.get(key, now),
        'live',
        `prune must keep an unexpired ephemeral entry (${key})`,
      );
    }
    for (const grant of s.liveGrants) {
      assert.equal(
        (await store.grants.list({ userId: grant.userId, clientId: grant.clientId })).length,
        1,
        `prune must keep ${grant.why}`,
      );
    }
    for (const grant of s.deadGrants) {
      assert.deepStrictEqual(
        await store.grants.list({ userId: grant.userId, clientId: grant.clientId }),
        [],
        'prune must delete a grant revoked longer ago than the retention (31 days ago, default 30)',
      );
    }
    if (result) {
      assert.ok(
        result.tokens >= s.deadTokens.length &&
          result.grants >= s.deadGrants.length &&
          // A store with native expiry (no ephemeral.prune) has nothing left for prune to count.
          (store.ephemeral.prune === undefined || result.ephemeral >= s.deadEntries.length),
        `prune must count what it deleted: at least ${JSON.stringify({
          ephemeral: s.deadEntries.length,
          tokens: s.deadTokens.length,
          grants: s.deadGrants.length,
        })}; received ${JSON.stringify(result)}`,
      );
    }
  }

  suite.part('prune')('storage.prune', () => {
    it('deletes expired entries and tokens, tokens of revoked, replaced or absent grants and removed clients, old revoked grants; keeps the rest', async () => {
      const now = Date.now();
      const s = await scenario(now);
      const result = await prune(now);
      await expectPruned(s, now, result);
      // Entries the kit wrote as of an hour ago: a store with native expiry (no ephemeral.prune)
      // gave them an hour to live in its own time, so only a pruned store is asked about them.
      if (storage().ephemeral.prune === undefined) return;
      for (const key of s.deadEntries) {
        assert.equal(
          await storage().ephemeral.add(key, 'again', now + HOUR, now),
          true,
          'after prune, an expired key can be added again',
        );
      }
    });

    it('honours revokedGrantRetentionMs and deletes everything in small batches', async () => {
      const now = Date.now();
      const clientId = freshId('client');
      const hourAgo = grantRecord(now - DAY, { clientId, revokedAt: now - 2 * HOUR });
      const justNow = grantRecord(now - DAY, { clientId, revokedAt: now - 30 * MINUTE });
      await storage().grants.save(hourAgo);
      await storage().grants.save(justNow);
      const expired = Array.from({ length: 7 }, () => accessTokenRecord(now - 2 * HOUR, justNow));
      for (const token of expired) await storage().tokens.save(token);
      const result = await prune(now, { revokedGrantRetentionMs: HOUR, batchSize: 2 });
      const left = (await storage().grants.list({ clientId })).map((grant) => grant.grantId);
      assert.deepStrictEqual(
        left,
        [justNow.grantId],
        'prune with revokedGrantRetentionMs one hour must delete the grant revoked two hours ago and keep the one revoked 30 minutes ago',
      );
      for (const token of expired) {
        assert.equal(
          await storage().tokens.find(token.tokenHash),
          null,
          'prune with batchSize 2 must still delete every dead token, batch after batch',
        );
      }
      assert.ok(
        result.tokens >= 7 && result.grants >= 1,
        `prune must count what it deleted; received ${JSON.stringify(result)}`,
      );
    });

    it("deletes a self-registered client never used past its unusedExpiresAt, with its grants, when it counts clients; keeps one used, one not yet due, and the operator's", async () => {
      if (!has('clientAdmin')) return;
      const now = Date.now();
      const s = storage();
      const admin = s.clients as Required<Storage['clients']>;
      const selfRegistered = (unusedExpiresAt: number) =>
        clientRecord(now - DAY, { secretHash: null, unusedExpiresAt });
      const unused = selfRegistered(now);
      const used = selfRegistered(now - HOUR);
      const notYet = selfRegistered(now + 1);
      const operator = clientRecord(now - 2 * DAY);
      for (const client of [unused, used, notYet, operator]) await admin.create(client);
      await admin.update(used.clientId, { unusedExpiresAt: null });
      // A consent given, the code never exchanged: the grant goes with its client.
      const grant = grantRecord(now - HOUR, { clientId: unused.clientId });
      await s.grants.save(grant);
      const result = await prune(now);
      for (const [client, why] of [
        [used, 'a self-registered client whose first token cleared its unusedExpiresAt'],
        [notYet, 'a self-registered client whose unusedExpiresAt is 1 ms after now'],
        [operator, 'a client registered by the operator (no unusedExpiresAt)'],
      ] as const) {
        assert.ok(await s.clients.find(client.clientId), `prune must keep ${why}`);
      }
      // An adapter whose prune does not count clients removes none: it is not asked to.
      if (result.clients === undefined) return;
      isNull(
        await s.clients.find(unused.clientId),
        'prune must delete a self-registered client whose unusedExpiresAt is at or before now',
      );
      assert.deepStrictEqual(
        await s.grants.list({ clientId: unused.clientId }),
        [],
        'prune must delete the grants of a self-registered client it deletes',
      );
      assert.ok(
        result.clients >= 1,
        `prune must count the clients it deleted; received ${JSON.stringify(result)}`,
      );
    });

    it('is safe from several instances at once: 5 concurrent calls resolve and leave the same result', async () => {
      const now = Date.now() + SECOND;
      const s = await scenario(now);
      await race('prune', 5, () => prune(now));
      await expectPruned(s, now, undefined);
    });
  });
}
