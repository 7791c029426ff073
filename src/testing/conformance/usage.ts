import assert from 'node:assert/strict';
import type { LastUse, UsageCount } from '../../storage/types.js';
import { usageDay } from '../../storage/usage-types.js';
import type { ConformanceSuite } from './api.js';
import { DAY, freshId, HOUR } from './fixtures.js';

/** `usage.add`, `usage.counts` and `usage.lastUse` (per-app usage), present unless declared absent. */
export function usageTests({ part, it, storage, has }: ConformanceSuite): void {
  const usage = () => storage().usage!;
  /** Two fresh client ids in the order every adapter sorts them (a shared prefix, then `a`/`b`). */
  const twoClients = () => {
    const base = freshId('client');
    return [`${base}-a`, `${base}-b`] as const;
  };

  part('usage')('usage', () => {
    it('add sums counts per client, day and kind; counts filters by client and day and orders them', async () => {
      const now = Date.now();
      const [a, b] = twoClients();
      const [today, yesterday, old] = [usageDay(now), usageDay(now - DAY), usageDay(now - 40 * DAY)];
      await usage().add({
        counts: [
          { clientId: b, day: today, kind: 'bearer', count: 5 },
          { clientId: a, day: today, kind: 'token', count: 1 },
          { clientId: a, day: yesterday, kind: 'refresh', count: 2 },
          { clientId: a, day: old, kind: 'bearer', count: 7 },
        ],
        lastUse: [],
      });
      await usage().add({
        counts: [
          { clientId: a, day: today, kind: 'token', count: 2 },
          // The same key twice in one batch counts twice.
          { clientId: b, day: today, kind: 'bearer', count: 1 },
          { clientId: b, day: today, kind: 'bearer', count: 1 },
        ],
        lastUse: [],
      });
      const mine = (counts: UsageCount[]) => counts.filter((c) => c.clientId === a || c.clientId === b);
      assert.deepStrictEqual(
        mine(await usage().counts({ since: yesterday })),
        [
          { clientId: a, day: yesterday, kind: 'refresh', count: 2 },
          { clientId: a, day: today, kind: 'token', count: 3 },
          { clientId: b, day: today, kind: 'bearer', count: 7 },
        ],
        'usage.counts must sum what add added per client, day and kind, keep the days at or after since, and order by clientId, day, kind',
      );
      assert.deepStrictEqual(
        await usage().counts({ clientId: a, since: old }),
        [
          { clientId: a, day: old, kind: 'bearer', count: 7 },
          { clientId: a, day: yesterday, kind: 'refresh', count: 2 },
          { clientId: a, day: today, kind: 'token', count: 3 },
        ],
        "usage.counts({ clientId }) must return that client's counts only, oldest day first",
      );
      assert.deepStrictEqual(
        await usage().counts({ clientId: freshId('client'), since: old }),
        [],
        'usage.counts must resolve [] for a client never counted',
      );
    });

    it('add moves last use forward only, per client and per account; lastUse filters by both', async () => {
      const now = Date.now();
      const [a, b] = twoClients();
      const [alice, bob] = [freshId('user'), freshId('user')];
      await usage().add({
        counts: [],
        lastUse: [
          { clientId: a, userId: null, at: now },
          { clientId: a, userId: alice, at: now - HOUR },
          { clientId: b, userId: null, at: now - 2 * HOUR },
          { clientId: b, userId: bob, at: now - 2 * HOUR },
        ],
      });
      await usage().add({
        counts: [],
        lastUse: [
          // Earlier than stored: a slower instance's batch must not move it back.
          { clientId: a, userId: null, at: now - HOUR },
          { clientId: a, userId: alice, at: now },
        ],
      });
      const mine = (uses: LastUse[]) => uses.filter((u) => u.clientId === a || u.clientId === b);
      assert.deepStrictEqual(
        mine(await usage().lastUse({ userId: null })),
        [
          { clientId: a, userId: null, at: now },
          { clientId: b, userId: null, at: now - 2 * HOUR },
        ],
        "usage.lastUse({ userId: null }) must return the clients' own rows, each the latest use added, never moved back",
      );
      assert.deepStrictEqual(
        await usage().lastUse({ userId: alice }),
        [{ clientId: a, userId: alice, at: now }],
        "usage.lastUse({ userId }) must return that account's rows only, moved forward",
      );
      assert.deepStrictEqual(
        await usage().lastUse({ clientId: b }),
        [
          { clientId: b, userId: null, at: now - 2 * HOUR },
          { clientId: b, userId: bob, at: now - 2 * HOUR },
        ],
        "usage.lastUse({ clientId }) must return the client's own row first, then its accounts'",
      );
    });

    it('10 concurrent adds to one count lose none', async () => {
      const now = Date.now();
      const clientId = freshId('client');
      const day = usageDay(now);
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          usage().add({
            counts: [{ clientId, day, kind: 'bearer', count: 1 }],
            lastUse: [{ clientId, userId: null, at: now + i }],
          }),
        ),
      );
      assert.deepStrictEqual(
        await usage().counts({ clientId, since: day }),
        [{ clientId, day, kind: 'bearer', count: 10 }],
        'usage.add must add atomically: 10 concurrent adds of 1 make 10',
      );
      assert.deepStrictEqual(
        await usage().lastUse({ clientId }),
        [{ clientId, userId: null, at: now + 9 }],
        'usage.add racing must keep the latest last use',
      );
    });

    it('concurrent adds of the same rows in opposite orders both succeed (no deadlock)', async () => {
      const now = Date.now();
      const day = usageDay(now);
      const clients = Array.from({ length: 600 }, () => freshId('client'));
      const batch = (ids: string[]) => ({
        counts: ids.map((clientId) => ({ clientId, day, kind: 'bearer' as const, count: 1 })),
        lastUse: ids.map((clientId) => ({ clientId, userId: null, at: now })),
      });
      // Two instances writing the clients they saw, in the order they saw them: more rows than
      // one statement takes, so a store that locks in the order given waits in a circle.
      await Promise.all([usage().add(batch(clients)), usage().add(batch([...clients].reverse()))]);
      const counts = await Promise.all(
        [clients[0]!, clients[599]!].map((clientId) => usage().counts({ clientId, since: day })),
      );
      assert.deepStrictEqual(
        counts.map((rows) => rows.map((row) => row.count)),
        [[2], [2]],
        'usage.add racing with the same rows in another order must add both',
      );
    });

    if (has('prune')) {
      it('prune deletes usage older than usageRetentionMs and keeps the rest', async () => {
        const now = Date.now();
        const clientId = freshId('client');
        const [today, old] = [usageDay(now), usageDay(now - 10 * DAY)];
        await usage().add({
          counts: [
            { clientId, day: old, kind: 'token', count: 1 },
            { clientId, day: today, kind: 'token', count: 1 },
          ],
          lastUse: [
            { clientId, userId: null, at: now },
            { clientId, userId: freshId('user'), at: now - 10 * DAY },
          ],
        });
        const result = await storage().prune!(now, { usageRetentionMs: 5 * DAY, batchSize: 1 });
        assert.ok(
          (result.usage ?? 0) >= 2,
          `prune must count the usage rows it deleted (at least 2), resolved ${String(result.usage)}`,
        );
        assert.deepStrictEqual(
          await usage().counts({ clientId, since: old }),
          [{ clientId, day: today, kind: 'token', count: 1 }],
          'prune with usageRetentionMs must delete the counts of days before the retention and keep today',
        );
        assert.deepStrictEqual(
          await usage().lastUse({ clientId }),
          [{ clientId, userId: null, at: now }],
          'prune with usageRetentionMs must delete the last uses older than the retention and keep a recent one',
        );
      });
    }
  });
}
