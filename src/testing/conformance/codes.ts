import type { ConformanceSuite } from './api.js';
import { equal, isNull, oneWinner, race, sameRecord } from './check.js';
import { RACERS, SECOND, codeRecord, freshHash } from './fixtures.js';

const ATOMIC_HINT =
  'Mark the code used in one atomic operation (e.g. UPDATE ... SET used_at = $now WHERE code_hash = $1 ' +
  'AND used_at IS NULL RETURNING ...), never a read followed by a write.';

/** `codes`: single use under any race, replay detection, lossless records. */
export function codeTests({ describe, it, storage }: ConformanceSuite): void {
  describe('codes', () => {
    it('consume: an unknown hash gives null', async () => {
      isNull(
        await storage().codes.consume(freshHash(), Date.now()),
        'codes.consume must resolve null for a code hash it never stored',
      );
    });

    it('consume: the first call gives consumed with every field, null PKCE fields included', async () => {
      const now = Date.now();
      const code = codeRecord(now);
      await storage().codes.create(code);
      const result = await storage().codes.consume(code.codeHash, now + SECOND);
      equal(result?.status, 'consumed', 'codes.consume must give status "consumed" to the first caller');
      sameRecord(
        result.code,
        code,
        'codes.consume must return the code exactly as created (codeChallenge and codeChallengeMethod stay null)',
      );
    });

    it('consume: a PKCE code round-trips its challenge', async () => {
      const now = Date.now();
      const code = codeRecord(now, { codeChallenge: freshHash(), codeChallengeMethod: 'S256', scopes: [] });
      await storage().codes.create(code);
      const result = await storage().codes.consume(code.codeHash, now);
      equal(result?.status, 'consumed', 'codes.consume must give status "consumed" to the first caller');
      sameRecord(
        result.code,
        code,
        'codes.consume must return a PKCE code with its challenge, method and empty scopes',
      );
    });

    it('consume: later calls give replayed, with the code', async () => {
      const now = Date.now();
      const code = codeRecord(now);
      await storage().codes.create(code);
      await storage().codes.consume(code.codeHash, now);
      for (const attempt of [1, 2]) {
        const result = await storage().codes.consume(code.codeHash, now + attempt * SECOND);
        equal(
          result?.status,
          'replayed',
          `codes.consume must give status "replayed" to every call after the first (call ${attempt + 1})`,
        );
        sameRecord(
          result.code,
          code,
          'codes.consume must return the code with "replayed" too (its grantId is revoked)',
        );
      }
    });

    it(`consume: exactly one of ${RACERS} concurrent callers gets consumed`, async () => {
      const now = Date.now();
      const code = codeRecord(now);
      await storage().codes.create(code);
      const results = await race('codes.consume', RACERS, () => storage().codes.consume(code.codeHash, now));
      oneWinner(
        results.map((result) => result?.status ?? null),
        'consumed',
        'replayed',
        `codes.consume: of ${RACERS} concurrent calls for one code, exactly one must get "consumed" and all ` +
          `others "replayed". ${ATOMIC_HINT}`,
      );
    });

    it('consume: using one code leaves other codes unused', async () => {
      const now = Date.now();
      const [used, other] = [codeRecord(now), codeRecord(now)];
      await storage().codes.create(used);
      await storage().codes.create(other);
      await storage().codes.consume(used.codeHash, now);
      const result = await storage().codes.consume(other.codeHash, now);
      equal(result?.status, 'consumed', 'codes.consume of one code must not mark any other code used');
      sameRecord(result.code, other, 'codes.consume must return the code whose hash it was given');
    });
  });
}
