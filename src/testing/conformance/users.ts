import assert from 'node:assert/strict';
import type { UserRecord } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal, isNull, race, sameRecord, tally } from './check.js';
import { RACERS, SECOND, freshId } from './fixtures.js';

/** A fresh OpenID identity at a fresh provider. */
function freshIdentity(): { identifier: string; provider: string } {
  return { identifier: `https://id.example/${freshId('user')}`, provider: freshId('Provider') };
}

/** `users`: one user per identity, even when first logins race. */
export function userTests({ describe, it, storage, part }: ConformanceSuite): void {
  describe('users.findOrCreate', () => {
    it('creates the user with the given id, identity and time', async () => {
      const now = Date.now();
      const identity = freshIdentity();
      const id = freshId('user');
      sameRecord(
        await storage().users.findOrCreate(identity, id, now),
        { id, ...identity, createdAt: now },
        'users.findOrCreate must create the user with id newId, this identifier and provider, created at `now`',
      );
    });

    it('the same identity again gives the same user, unchanged (another newId is ignored)', async () => {
      const now = Date.now();
      const identity = freshIdentity();
      const first = await storage().users.findOrCreate(identity, freshId('user'), now);
      const again = await storage().users.findOrCreate({ ...identity }, freshId('user'), now + 10 * SECOND);
      sameRecord(
        again,
        first,
        'users.findOrCreate must return the existing user for an identity it has seen (same id, first createdAt)',
      );
    });

    it(`${RACERS} concurrent calls for one identity resolve one user`, async () => {
      const now = Date.now();
      const identity = freshIdentity();
      const users = await race('users.findOrCreate', RACERS, () =>
        storage().users.findOrCreate(identity, freshId('user'), now),
      );
      const ids = tally(users.map((user: UserRecord) => user.id));
      equal(
        Object.keys(ids).length,
        1,
        `users.findOrCreate: ${RACERS} concurrent first logins of one identity must all resolve the same user ` +
          `(a unique index on (provider, identifier) and insert-or-select); ids received: ${JSON.stringify(ids)}`,
      );
      sameRecord(
        await storage().users.findOrCreate(identity, freshId('user'), now),
        users[0]!,
        'users.findOrCreate after the race must still resolve the one user',
      );
    });

    it('another provider, another identifier, or parts that join to the same string are other users', async () => {
      const now = Date.now();
      const identity = freshIdentity();
      const user = await storage().users.findOrCreate(identity, freshId('user'), now);
      const tail = freshId('x');
      const variants = [
        {
          what: 'the same identifier at another provider',
          identity: { ...identity, provider: freshId('Provider') },
        },
        {
          what: 'another identifier at the same provider',
          identity: { ...identity, identifier: `${identity.identifier}x` },
        },
        {
          what: 'the identifier in other letter case (URL paths are case-sensitive)',
          identity: { ...identity, identifier: identity.identifier.toUpperCase() },
        },
      ];
      for (const variant of variants) {
        const other = await storage().users.findOrCreate(variant.identity, freshId('user'), now);
        assert.notEqual(
          other.id,
          user.id,
          `users.findOrCreate must create a separate user for ${variant.what}; it returned the existing user`,
        );
      }
      const joined = [
        { provider: `${tail}a`, identifier: 'bc' },
        { provider: tail, identifier: 'abc' },
      ];
      const [first, second] = [
        await storage().users.findOrCreate(joined[0]!, freshId('user'), now),
        await storage().users.findOrCreate(joined[1]!, freshId('user'), now),
      ];
      assert.notEqual(
        first.id,
        second.id,
        'users.findOrCreate must tell (provider "Xa", identifier "bc") from (provider "X", identifier "abc"): ' +
          'a key made by joining the two strings confuses them',
      );
    });
  });

  part('userFind')('users.find', () => {
    it('returns the user findOrCreate created, and null for an unknown id', async () => {
      const user = await storage().users.findOrCreate(freshIdentity(), freshId('user'), Date.now());
      sameRecord(await storage().users.find!(user.id), user, 'users.find(id) must return the user');
      isNull(await storage().users.find!(freshId('user')), 'users.find must resolve null for an unknown id');
    });
  });
}
