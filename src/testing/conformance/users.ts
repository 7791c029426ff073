import assert from 'node:assert/strict';
import type { UserRecord } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal, isNull, race, sameRecord, tally } from './check.js';
import { RACERS, SECOND, freshId } from './fixtures.js';

/** A fresh OpenID identity at a fresh provider. */
function freshIdentity(): { identifier: string; provider: string } {
  return { identifier: `https://id.example/${freshId('user')}`, provider: freshId('Provider') };
}

/** `users`: one user per identity, even when logins race. */
export function userTests({ describe, it, storage }: ConformanceSuite): void {
  describe('users', () => {
    it('find: an unknown id gives null', async () => {
      isNull(await storage().users.find(freshId('user')), 'users.find must resolve null for an unknown id');
    });

    it('findOrCreate: creates the user, which find then returns', async () => {
      const now = Date.now();
      const identity = freshIdentity();
      const user = await storage().users.findOrCreate(identity, freshId('user'), now);
      assert.ok(
        typeof user.id === 'string' && user.id !== '',
        `users.findOrCreate must resolve a user with a non-empty string id; got ${JSON.stringify(user)}`,
      );
      sameRecord(
        user,
        { ...identity, createdAt: now },
        'users.findOrCreate must create the user with this identifier and provider, created at `now`',
      );
      sameRecord(
        await storage().users.find(user.id),
        user,
        'users.find(id) must return the user findOrCreate created',
      );
    });

    it('findOrCreate: the same identity again gives the same user, unchanged', async () => {
      const now = Date.now();
      const identity = freshIdentity();
      const first = await storage().users.findOrCreate(identity, freshId('user'), now);
      const again = await storage().users.findOrCreate({ ...identity }, freshId('user'), now + 10 * SECOND);
      sameRecord(
        again,
        first,
        'users.findOrCreate must return the existing user for an identity it has seen (same id, first createdAt), ' +
          'not create another',
      );
    });

    it(`findOrCreate: ${RACERS} concurrent calls for one identity give one user`, async () => {
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
          `(use a unique index on (provider, identifier) and insert-or-select); ids received: ${JSON.stringify(ids)}`,
      );
      sameRecord(
        await storage().users.find(users[0]!.id),
        users[0]!,
        'users.find must return the one user created by concurrent findOrCreate calls',
      );
    });

    it('findOrCreate: another provider or another identifier is another user', async () => {
      const now = Date.now();
      const identity = freshIdentity();
      const user = await storage().users.findOrCreate(identity, freshId('user'), now);
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
          what: 'the identifier with its path in other letter case (URL paths are case-sensitive)',
          identity: { ...identity, identifier: identity.identifier.replace('/user-', '/USER-') },
        },
      ];
      for (const variant of variants) {
        const other = await storage().users.findOrCreate(variant.identity, freshId('user'), now);
        assert.notEqual(
          other.id,
          user.id,
          `users.findOrCreate must create a separate user for ${variant.what}; it returned the existing user ${user.id}`,
        );
        sameRecord(other, { ...variant.identity, createdAt: now }, `users.findOrCreate for ${variant.what}`);
      }
    });
  });
}
