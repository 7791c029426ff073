import assert from 'node:assert/strict';
import type { GrantRecord } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal, race, sameRecord } from './check.js';
import { DAY, RACERS, SECOND, accessTokenRecord, freshId, grantRecord } from './fixtures.js';

/** The ids of `grants` in order, for messages. */
const ids = (grants: readonly GrantRecord[]) => grants.map((grant) => grant.grantId);

/** `grants.list` and `grants.save`: one grant per user and client. */
export function grantTests({ describe, it, storage }: ConformanceSuite): void {
  describe('grants', () => {
    it('save inserts a grant; list by user and client returns it, every field as saved', async () => {
      const grant = grantRecord(Date.now());
      await storage().grants.save(grant);
      const listed = await storage().grants.list({ userId: grant.userId, clientId: grant.clientId });
      equal(listed.length, 1, 'grants.list({ userId, clientId }) must return the one saved grant');
      sameRecord(
        listed[0],
        grant,
        'grants.list must return every field as saved (revokedAt null stays null)',
      );
    });

    it('save of the same grant replaces it: scopes, resources, updatedAt and a numeric revokedAt round-trip', async () => {
      const now = Date.now();
      const grant = grantRecord(now);
      await storage().grants.save(grant);
      const revoked = {
        ...grant,
        scopes: ['realms:read', 'profile', 'realms:write'],
        resources: ['https://api.printer.example/', 'https://printer.example/mcp'],
        updatedAt: now + SECOND,
        revokedAt: now + 2 * SECOND,
      };
      await storage().grants.save(revoked);
      const listed = await storage().grants.list({ userId: grant.userId, clientId: grant.clientId });
      equal(listed.length, 1, 'grants.save of the same grant must replace it, not add a row');
      sameRecord(listed[0], revoked, 'grants.save must write every field as given (revokedAt a number)');
    });

    it('save with another grantId for the same user and client replaces the grant; the old id is gone', async () => {
      const now = Date.now();
      const old = grantRecord(now, { revokedAt: now });
      await storage().grants.save(old);
      const oldToken = accessTokenRecord(now, old);
      await storage().tokens.save(oldToken);
      const next = grantRecord(now + SECOND, { userId: old.userId, clientId: old.clientId });
      await storage().grants.save(next);
      const newToken = accessTokenRecord(now, next);
      await storage().tokens.save(newToken);
      for (const filter of [
        { userId: old.userId, clientId: old.clientId },
        { userId: old.userId },
        { clientId: old.clientId },
      ]) {
        const listed = await storage().grants.list(filter);
        assert.deepStrictEqual(
          ids(listed),
          [next.grantId],
          `grants.save must replace the grant of the same user and client whatever its grantId: ` +
            `grants.list(${JSON.stringify(filter)}) must give only the new grant`,
        );
        sameRecord(listed[0], next, 'grants.list must return the replacing grant as saved');
      }
      const foundOld = await storage().tokens.find(oldToken.tokenHash);
      assert.ok(
        foundOld === null || foundOld.grant === null,
        `tokens.find of a token of a replaced grant must give grant null (no grant has its grantId any more); ` +
          `received grant ${JSON.stringify(foundOld?.grant)}`,
      );
      sameRecord(
        (await storage().tokens.find(newToken.tokenHash))?.grant,
        next,
        'tokens.find of a token of the replacing grant must join that grant',
      );
    });

    it('list filters by user, by client, by both, or not at all', async () => {
      const now = Date.now();
      const [userA, userB, clientX, clientY] = [
        freshId('user'),
        freshId('user'),
        freshId('client'),
        freshId('client'),
      ];
      const ax = grantRecord(now, { userId: userA, clientId: clientX });
      const ay = grantRecord(now + SECOND, { userId: userA, clientId: clientY, revokedAt: now + 2 * SECOND });
      const bx = grantRecord(now + 2 * SECOND, { userId: userB, clientId: clientX });
      for (const grant of [ay, bx, ax]) await storage().grants.save(grant);
      const cases: Array<[{ userId?: string; clientId?: string }, GrantRecord[]]> = [
        [{ userId: userA }, [ax, ay]],
        [{ clientId: clientX }, [ax, bx]],
        [{ userId: userA, clientId: clientY }, [ay]],
        [{ userId: userB, clientId: clientY }, []],
        [{ userId: freshId('user') }, []],
      ];
      for (const [filter, expected] of cases) {
        const listed = await storage().grants.list(filter);
        assert.deepStrictEqual(
          ids(listed),
          ids(expected),
          `grants.list(${JSON.stringify(filter)}) must return exactly the grants matching every field of the filter ` +
            `(revoked ones included), by createdAt`,
        );
        listed.forEach((grant, index) =>
          sameRecord(grant, expected[index]!, 'grants.list must return every field'),
        );
      }
      const all = ids(await storage().grants.list({})).filter((id) =>
        [ax, ay, bx].some((g) => g.grantId === id),
      );
      assert.deepStrictEqual(all, ids([ax, ay, bx]), 'grants.list({}) must return every grant, by createdAt');
    });

    it('list orders by createdAt, then clientId', async () => {
      const now = Date.now();
      const userId = freshId('user');
      const prefix = freshId('client');
      const at = (suffix: string, createdAt: number) =>
        grantRecord(createdAt, { userId, clientId: `${prefix}-${suffix}` });
      const grants = [at('b', now), at('d', now + DAY), at('a', now), at('c', now - DAY)];
      for (const grant of grants) await storage().grants.save(grant);
      assert.deepStrictEqual(
        (await storage().grants.list({ userId })).map((grant) => grant.clientId.slice(prefix.length + 1)),
        ['c', 'a', 'b', 'd'],
        'grants.list must order grants by createdAt, then by clientId',
      );
    });

    it('a user and a client whose ids join to the same string are another pair', async () => {
      const now = Date.now();
      const tail = freshId('x');
      const first = grantRecord(now, { userId: `${tail}ab`, clientId: 'c-client' });
      const second = grantRecord(now, { userId: `${tail}a`, clientId: 'bc-client' });
      await storage().grants.save(first);
      await storage().grants.save(second);
      for (const grant of [first, second]) {
        assert.deepStrictEqual(
          ids(await storage().grants.list({ userId: grant.userId, clientId: grant.clientId })),
          [grant.grantId],
          `grants.save must keep (user "${tail}ab", client "c-client") and (user "${tail}a", client "bc-client") apart`,
        );
      }
    });

    it(`${RACERS} concurrent saves of new grants for one user and client leave one grant`, async () => {
      const now = Date.now();
      const pair = { userId: freshId('user'), clientId: freshId('client') };
      const grants = Array.from({ length: RACERS }, () => grantRecord(now, pair));
      await race('grants.save', RACERS, (index) => storage().grants.save(grants[index]!));
      const listed = await storage().grants.list(pair);
      equal(
        listed.length,
        1,
        `grants.save: after ${RACERS} concurrent saves for one user and client, there must be one grant ` +
          `(a unique index on (userId, clientId) and an upsert); listed ${JSON.stringify(ids(listed))}`,
      );
      assert.ok(
        grants.some((grant) => grant.grantId === listed[0]!.grantId),
        'grants.list must return one of the grants saved',
      );
    });

    it(`${RACERS} concurrent saves of the same new grant (two revocations at once) all resolve, one grant`, async () => {
      const now = Date.now();
      const grant = grantRecord(now, { revokedAt: now });
      await race('grants.save', RACERS, (index) =>
        storage().grants.save({ ...grant, updatedAt: now + index }),
      );
      const listed = await storage().grants.list({ userId: grant.userId, clientId: grant.clientId });
      assert.deepStrictEqual(
        ids(listed),
        [grant.grantId],
        `grants.save: after ${RACERS} concurrent saves of one grant there must be that one grant`,
      );
    });

    it('stores a copy: changing the saved or the listed scopes changes nothing stored', async () => {
      const grant = grantRecord(Date.now());
      const saved = structuredClone(grant);
      await storage().grants.save(saved);
      saved.scopes.push('admin');
      const [listed] = await storage().grants.list({ userId: grant.userId, clientId: grant.clientId });
      assert.ok(listed, 'grants.list must return the saved grant');
      listed.scopes.push('admin');
      sameRecord(
        (await storage().grants.list({ userId: grant.userId, clientId: grant.clientId }))[0],
        grant,
        'grants.save and grants.list must not share arrays with the caller',
      );
    });
  });
}
