import assert from 'node:assert/strict';
import { ephemeralKeys } from '../../storage/keys.js';
import type { EphemeralCounter } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { race } from './check.js';
import { MINUTE, RACERS, freshId } from './fixtures.js';

/**
 * The ephemeral store as the rate limiter uses it: a fixed window per client or address, counted
 * with `increment`. The method's own guarantees are in the ephemeral tests; this is the shape of
 * its use, with the library's keys.
 */
export function rateLimitTests({ describe, it, storage }: ConformanceSuite): void {
  describe('ephemeral: a rate-limit window', () => {
    it('counts 1, 2, 3 within a fixed window, then starts again from 1 once it ends', async () => {
      // Real time and a short window, so that a store with native expiry (Redis) is tested too.
      const WINDOW = 400;
      const key = ephemeralKeys.rateLimit(`client:${freshId('client')}`);
      const first = Date.now();
      const counts: EphemeralCounter[] = [];
      for (let i = 0; i < 3; i++) {
        const now = Date.now();
        // Each request asks for a window starting at its own time: a live window keeps its own.
        counts.push(await storage().ephemeral.increment(key, now + WINDOW, now));
      }
      assert.deepStrictEqual(
        counts.map((counter) => counter.count),
        [1, 2, 3],
        'ephemeral.increment must count 1, 2, 3 within one window',
      );
      for (const counter of counts) {
        assert.ok(
          Math.abs(counter.expiresAt - counts[0]!.expiresAt) <= 50 &&
            Math.abs(counts[0]!.expiresAt - (first + WINDOW)) <= 50,
          `ephemeral.increment must keep the expiry of the window's first increment (a fixed window): ${JSON.stringify(counts)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, counts[0]!.expiresAt - Date.now() + 20));
      const after = Date.now();
      const next = await storage().ephemeral.increment(key, after + WINDOW, after);
      assert.strictEqual(next.count, 1, 'ephemeral.increment after the window ended must start again at 1');
      assert.ok(
        Math.abs(next.expiresAt - (after + WINDOW)) <= 50,
        `a new window must expire at the expiry asked for: ${JSON.stringify(next)}`,
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
