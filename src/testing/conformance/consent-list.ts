import assert from 'node:assert/strict';
import type { ConsentSummary } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal, sameMembers, sameRecord } from './check.js';
import { MINUTE, SECOND, accessToken, enrolledOwner, freshId, refreshToken } from './fixtures.js';

/** `consents.list`: what an operator or a user's account page shows. */
export function consentListTests({ describe, it, storage }: ConformanceSuite): void {
  /** The consents of three pairs: alice with printer and mailer, bob with printer. */
  async function consents(now: number) {
    const [alice, bob, printer, mailer] = [
      freshId('user'),
      freshId('user'),
      freshId('client'),
      freshId('client'),
    ];
    await storage().consents.grant(alice, printer, ['print'], now);
    await storage().consents.grant(bob, printer, ['scan'], now + SECOND);
    await storage().consents.grant(alice, mailer, ['mail'], now + 2 * SECOND);
    return { alice, bob, printer, mailer };
  }

  const pairs = (list: ConsentSummary[]) => list.map((consent) => `${consent.userId} ${consent.clientId}`);

  describe('consents: list', () => {
    it('filters by user, by client, or both, ordered by createdAt', async () => {
      const now = Date.now();
      const { alice, bob, printer, mailer } = await consents(now);
      const cases = [
        { filter: { userId: alice }, expected: [`${alice} ${printer}`, `${alice} ${mailer}`] },
        { filter: { clientId: printer }, expected: [`${alice} ${printer}`, `${bob} ${printer}`] },
        { filter: { userId: bob, clientId: printer }, expected: [`${bob} ${printer}`] },
        { filter: { userId: bob, clientId: mailer }, expected: [] },
      ];
      for (const { filter, expected } of cases) {
        assert.deepStrictEqual(
          pairs(await storage().consents.list(filter)),
          expected,
          `consents.list(${JSON.stringify(filter)}) must list exactly the matching consents ("user client"), ` +
            'ordered by createdAt',
        );
      }
    });

    it('without a filter lists every consent; each as granted, lastUsedAt null without tokens', async () => {
      const now = Date.now();
      const { alice, bob, printer, mailer } = await consents(now);
      const ours = new Set([alice, bob]);
      const listed = (await storage().consents.list()).filter((consent) => ours.has(consent.userId));
      assert.deepStrictEqual(
        pairs(listed),
        [`${alice} ${printer}`, `${bob} ${printer}`, `${alice} ${mailer}`],
        'consents.list() must list every consent, ordered by createdAt',
      );
      const [first] = listed;
      sameRecord(
        first,
        { userId: alice, clientId: printer, createdAt: now, updatedAt: now, lastUsedAt: null },
        'consents.list must return each consent as granted, with lastUsedAt null when no token was issued',
      );
      sameMembers(first.scopes, ['print'], 'consents.list must return the granted scopes');
    });

    it("lastUsedAt: the newest createdAt of the user's tokens for the client still stored", async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      await storage().consents.grant(owner.userId, owner.clientId, ['a'], now);
      await storage().tokens.saveAccessToken(accessToken(now + MINUTE, owner));
      await storage().tokens.saveRefreshToken(refreshToken(now + 2 * MINUTE, owner));
      const other = await enrolledOwner(storage(), now, { userId: owner.userId });
      await storage().tokens.saveAccessToken(accessToken(now + 3 * MINUTE, other));
      const lastUsed = async () =>
        (await storage().consents.list({ userId: owner.userId, clientId: owner.clientId }))[0]?.lastUsedAt;
      equal(
        await lastUsed(),
        now + 2 * MINUTE,
        "consents.list must give lastUsedAt: the newest createdAt among the user's access and refresh tokens " +
          'for that client (tokens for other clients do not count)',
      );
      await storage().tokens.revokeForUserAndClient(owner.userId, owner.clientId, now + 4 * MINUTE);
      equal(
        await lastUsed(),
        null,
        'consents.list must give lastUsedAt null once none of those tokens is stored',
      );
    });
  });
}
