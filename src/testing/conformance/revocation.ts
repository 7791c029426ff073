import type { AccessTokenRecord, RefreshTokenRecord } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal, isNull, sameRecord } from './check.js';
import { SECOND, accessToken, freshId, enrolledOwner, refreshToken, type TokenOwner } from './fixtures.js';

/** The tokens of one authorization: two access tokens, a rotated refresh token and its replacement. */
interface Grant {
  access: AccessTokenRecord[];
  refresh: RefreshTokenRecord[];
}

async function issueGrant(suite: ConformanceSuite, owner: TokenOwner, now: number): Promise<Grant> {
  const tokens = suite.storage().tokens;
  const [first, second] = [
    accessToken(now, owner),
    accessToken(now + SECOND, owner, { origin: 'refresh_token' }),
  ];
  const [old, next] = [refreshToken(now, owner), refreshToken(now + SECOND, owner)];
  await tokens.saveAccessToken(first);
  await tokens.saveRefreshToken(old);
  equal(
    await tokens.rotateRefreshToken(old.tokenHash, next, now + SECOND),
    'rotated',
    'tokens.rotateRefreshToken must resolve "rotated" for an active token',
  );
  await tokens.saveAccessToken(second);
  return { access: [first, second], refresh: [{ ...old, rotatedAt: now + SECOND }, next] };
}

async function expectRevoked(suite: ConformanceSuite, grant: Grant, guarantee: string): Promise<void> {
  const tokens = suite.storage().tokens;
  for (const token of grant.access) {
    isNull(await tokens.findAccessToken(token.tokenHash), `${guarantee} (findAccessToken still returns it)`);
  }
  for (const token of grant.refresh) {
    isNull(
      await tokens.findRefreshToken(token.tokenHash),
      `${guarantee} (findRefreshToken still returns it)`,
    );
  }
}

async function expectActive(suite: ConformanceSuite, grant: Grant, guarantee: string): Promise<void> {
  const tokens = suite.storage().tokens;
  for (const token of grant.access) {
    sameRecord(
      await tokens.findAccessToken(token.tokenHash),
      token,
      `${guarantee} (an access token is gone or changed)`,
    );
  }
  for (const token of grant.refresh) {
    sameRecord(
      await tokens.findRefreshToken(token.tokenHash),
      token,
      `${guarantee} (a refresh token is gone or changed)`,
    );
  }
}

/** `tokens` revocation: per grant (code replay, refresh reuse) and per user and client. */
export function revocationTests(suite: ConformanceSuite): void {
  const { describe, it, storage } = suite;
  describe('tokens: revocation', () => {
    it('revokeGrant: revokes every token of the grant, rotated ones included, and counts them', async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      const revoked = await issueGrant(suite, owner, now);
      const sibling = await issueGrant(suite, { ...owner, grantId: freshId('grant') }, now);
      equal(
        await storage().tokens.revokeGrant(owner.grantId, now + 2 * SECOND),
        4,
        'tokens.revokeGrant must resolve the number of tokens it revoked (here 2 access and 2 refresh tokens)',
      );
      await expectRevoked(
        suite,
        revoked,
        'tokens.revokeGrant must revoke every access and refresh token of the grant',
      );
      await expectActive(
        suite,
        sibling,
        'tokens.revokeGrant must leave the tokens of other grants alone, even of the same user and client',
      );
      equal(
        await storage().tokens.revokeGrant(owner.grantId, now + 3 * SECOND),
        0,
        'tokens.revokeGrant must resolve 0 when the grant has no tokens left to revoke',
      );
    });

    it('revokeGrant: a revoked refresh token can no longer be rotated', async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      const token = refreshToken(now, owner);
      await storage().tokens.saveRefreshToken(token);
      await storage().tokens.revokeGrant(owner.grantId, now);
      equal(
        await storage().tokens.rotateRefreshToken(token.tokenHash, refreshToken(now, owner), now + SECOND),
        'missing',
        'tokens.rotateRefreshToken must resolve "missing" for a token whose grant was revoked',
      );
    });

    it('revokeGrant: tokens saved under the grant afterwards are never found', async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      await issueGrant(suite, owner, now);
      await storage().tokens.revokeGrant(owner.grantId, now + 2 * SECOND);
      const late = {
        access: [accessToken(now + 3 * SECOND, owner)],
        refresh: [refreshToken(now + 3 * SECOND, owner)],
      };
      await storage().tokens.saveAccessToken(late.access[0]!);
      await storage().tokens.saveRefreshToken(late.refresh[0]!);
      await expectRevoked(
        suite,
        late,
        'a token saved under a grant after tokens.revokeGrant must never be found (a code replay racing its first ' +
          'exchange revokes the grant before the exchange saves its tokens)',
      );
    });

    it('revokeGrant: a grant revoked before it has any token refuses its first tokens', async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      equal(
        await storage().tokens.revokeGrant(owner.grantId, now),
        0,
        'tokens.revokeGrant must resolve 0 for a grant without tokens',
      );
      const late = {
        access: [accessToken(now + SECOND, owner)],
        refresh: [refreshToken(now + SECOND, owner)],
      };
      await storage().tokens.saveAccessToken(late.access[0]!);
      await storage().tokens.saveRefreshToken(late.refresh[0]!);
      await expectRevoked(
        suite,
        late,
        'tokens.revokeGrant must be remembered even for a grant with no tokens yet: tokens saved under it later ' +
          'must never be found',
      );
    });

    it('revokeForUserAndClient: revokes every grant of the pair, and nothing of other users or clients', async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      const first = await issueGrant(suite, owner, now);
      const second = await issueGrant(suite, { ...owner, grantId: freshId('grant') }, now);
      const otherClient = await issueGrant(
        suite,
        await enrolledOwner(storage(), now, { userId: owner.userId }),
        now,
      );
      const otherUser = await issueGrant(
        suite,
        await enrolledOwner(storage(), now, { clientId: owner.clientId }),
        now,
      );
      equal(
        await storage().tokens.revokeForUserAndClient(owner.userId, owner.clientId, now + 2 * SECOND),
        8,
        'tokens.revokeForUserAndClient must resolve the number of tokens it revoked (here 2 grants of 4 tokens)',
      );
      await expectRevoked(
        suite,
        first,
        'tokens.revokeForUserAndClient must revoke every token of the user for the client',
      );
      await expectRevoked(
        suite,
        second,
        'tokens.revokeForUserAndClient must revoke the tokens of every grant of the pair',
      );
      await expectActive(
        suite,
        otherClient,
        "tokens.revokeForUserAndClient must keep the user's tokens for other clients",
      );
      await expectActive(
        suite,
        otherUser,
        "tokens.revokeForUserAndClient must keep other users' tokens for the client",
      );
      equal(
        await storage().tokens.revokeForUserAndClient(owner.userId, owner.clientId, now + 3 * SECOND),
        0,
        'tokens.revokeForUserAndClient must resolve 0 when the pair has no tokens left',
      );
    });
  });
}
