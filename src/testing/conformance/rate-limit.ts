import assert from 'node:assert/strict';
import { ephemeralKeys } from '../../storage/keys.js';
import type { ConformanceSuite } from './api.js';
import { race } from './check.js';
import { MINUTE, RACERS, SECOND, freshId } from './fixtures.js';

/**
 * The ephemeral store as the rate limiter uses it: a fixed window per client or address, counted
 * with `increment`. The method's own guarantees are in the ephemeral tests; this is the shape of
 * its use, with the library's keys.
 */
export function rateLimitTests({ describe, it, storage }: ConformanceSuite): void {
  describe('ephemeral: a rate-limit window', () => {
    it('counts 1, 2, 3 within a fixed window, then starts again from 1 once it ends', async () => {
      const start = Date.now();
      const key = ephemeralKeys.rateLimit(`client:${freshId('client')}`);
      const counts = [];
      for (let i = 0; i < 3; i++) {
        // Each request passes the end of a window starting now: a live window must keep its own.
        counts.push(
          await storage().ephemeral.increment(key, start + i * SECOND + MINUTE, start + i * SECOND),
        );
      }
      assert.deepStrictEqual(
        counts,
        [1, 2, 3].map((count) => ({ count, expiresAt: start + MINUTE })),
        'ephemeral.increment must count 1, 2, 3 in one window and keep the expiry of its first increment (a fixed window)',
      );
      const after = start + MINUTE;
      assert.deepStrictEqual(
        await storage().ephemeral.increment(key, after + MINUTE, after),
        { count: 1, expiresAt: after + MINUTE },
        'ephemeral.increment at the end of the window must start a new one at 1, with the new expiry',
      );
    });

    it(`${RACERS} concurrent requests of one client count 1 to ${RACERS}, once each`, async () => {
      const now = Date.now();
      const key = ephemeralKeys.rateLimit(`address:${freshId('ip')}`);
      const counters = await race('ephemeral.increment', RACERS, () =>
        storage().ephemeral.increment(key, now + MINUTE, now),
      );
      assert.deepStrictEqual(
        counters.map((counter) => counter.count).sort((a, b) => a - b),
        Array.from({ length: RACERS }, (_, index) => index + 1),
        `ephemeral.increment: ${RACERS} racing callers must each see a distinct count (a rate limit that loses counts lets requests through)`,
      );
    });
  });
}
