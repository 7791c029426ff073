import type { ConformanceSuite } from './api.js';
import { equal, isNull, oneWinner, race, sameRecord } from './check.js';
import { DAY, RACERS, SECOND, accessToken, freshHash, enrolledOwner, refreshToken } from './fixtures.js';

const ATOMIC_HINT =
  'Replace the token in one atomic operation (e.g. UPDATE ... SET rotated_at = $now WHERE token_hash = $1 ' +
  'AND rotated_at IS NULL AND NOT revoked), never a read followed by a write.';

/** `tokens`: lookups by hash, lossless records, and rotation that one caller wins. */
export function tokenTests({ describe, it, storage }: ConformanceSuite): void {
  describe('tokens', () => {
    it('find: an unknown hash gives null', async () => {
      isNull(
        await storage().tokens.findAccessToken(freshHash()),
        'tokens.findAccessToken must resolve null for an unknown hash',
      );
      isNull(
        await storage().tokens.findRefreshToken(freshHash()),
        'tokens.findRefreshToken must resolve null for an unknown hash',
      );
    });

    it('access tokens: every field round-trips, for each origin', async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      for (const origin of ['authorization_code', 'refresh_token', 'implicit'] as const) {
        const token = accessToken(now, owner, { origin, scopes: origin === 'implicit' ? [] : ['b', 'a'] });
        await storage().tokens.saveAccessToken(token);
        sameRecord(
          await storage().tokens.findAccessToken(token.tokenHash),
          token,
          `tokens.findAccessToken must return the token exactly as saved (origin "${origin}", scopes in order)`,
        );
      }
    });

    it('refresh tokens: every field round-trips, expiresAt null included', async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      const forever = refreshToken(now, owner);
      const expiring = refreshToken(now, owner, { expiresAt: now + 30 * DAY });
      for (const token of [forever, expiring]) {
        await storage().tokens.saveRefreshToken(token);
        sameRecord(
          await storage().tokens.findRefreshToken(token.tokenHash),
          token,
          `tokens.findRefreshToken must return the token exactly as saved (expiresAt ${token.expiresAt}, rotatedAt null)`,
        );
      }
    });

    it('find: an access token is never found as a refresh token, nor the reverse', async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      const access = accessToken(now, owner);
      const refresh = refreshToken(now, owner);
      await storage().tokens.saveAccessToken(access);
      await storage().tokens.saveRefreshToken(refresh);
      isNull(
        await storage().tokens.findRefreshToken(access.tokenHash),
        'tokens.findRefreshToken must not return an access token: it would let an access token refresh',
      );
      isNull(
        await storage().tokens.findAccessToken(refresh.tokenHash),
        'tokens.findAccessToken must not return a refresh token: it would let a refresh token call the API',
      );
    });

    it('rotateRefreshToken: an unknown token gives missing', async () => {
      const now = Date.now();
      const next = refreshToken(now, await enrolledOwner(storage(), now));
      equal(
        await storage().tokens.rotateRefreshToken(freshHash(), next, now),
        'missing',
        'tokens.rotateRefreshToken must resolve "missing" for a token hash it never stored',
      );
      isNull(
        await storage().tokens.findRefreshToken(next.tokenHash),
        'tokens.rotateRefreshToken must not save `next` when the old token is missing',
      );
    });

    it('rotateRefreshToken: rotated, then the old token is found with rotatedAt, then reused', async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      const old = refreshToken(now, owner);
      const next = refreshToken(now + SECOND, owner);
      await storage().tokens.saveRefreshToken(old);
      const at = now + 2 * SECOND;
      equal(
        await storage().tokens.rotateRefreshToken(old.tokenHash, next, at),
        'rotated',
        'tokens.rotateRefreshToken must resolve "rotated" for an active token',
      );
      sameRecord(
        await storage().tokens.findRefreshToken(next.tokenHash),
        next,
        'tokens.rotateRefreshToken must save `next`, which findRefreshToken then returns as given',
      );
      sameRecord(
        await storage().tokens.findRefreshToken(old.tokenHash),
        { ...old, rotatedAt: at },
        'tokens.findRefreshToken must still return a rotated token, with rotatedAt set to the `now` of the rotation, ' +
          'so that its reuse can be detected',
      );
      const again = refreshToken(at, owner);
      equal(
        await storage().tokens.rotateRefreshToken(old.tokenHash, again, at + SECOND),
        'reused',
        'tokens.rotateRefreshToken must resolve "reused" for a token already rotated away',
      );
      isNull(
        await storage().tokens.findRefreshToken(again.tokenHash),
        'tokens.rotateRefreshToken must not save `next` when it resolves "reused"',
      );
      equal(
        await storage().tokens.rotateRefreshToken(next.tokenHash, refreshToken(at, owner), at + SECOND),
        'rotated',
        'tokens.rotateRefreshToken must rotate the replacement token in turn',
      );
    });

    it(`rotateRefreshToken: exactly one of ${RACERS} concurrent callers gets rotated`, async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      const old = refreshToken(now, owner);
      await storage().tokens.saveRefreshToken(old);
      const nexts = Array.from({ length: RACERS }, () => refreshToken(now, owner));
      const results = await race('tokens.rotateRefreshToken', RACERS, (index) =>
        storage().tokens.rotateRefreshToken(old.tokenHash, nexts[index]!, now + SECOND),
      );
      oneWinner(
        results,
        'rotated',
        'reused',
        `tokens.rotateRefreshToken: of ${RACERS} concurrent rotations of one token, exactly one must get ` +
          `"rotated" and all others "reused". ${ATOMIC_HINT}`,
      );
      const saved = await Promise.all(nexts.map((next) => storage().tokens.findRefreshToken(next.tokenHash)));
      const winner = results.indexOf('rotated');
      equal(
        saved
          .map((token, index) => (token === null ? null : index))
          .filter((index) => index !== null)
          .join(','),
        String(winner),
        'tokens.rotateRefreshToken must save only the `next` of the caller that got "rotated" ' +
          '(the list is the indexes of the racers whose `next` was saved)',
      );
    });
  });
}
