import assert from 'node:assert/strict';
import type { ConsentRecord } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal, isNull, sameMembers, sameRecord } from './check.js';
import { MINUTE, freshId } from './fixtures.js';

/** The fields of a consent other than its scopes, whose order is free. */
function withoutScopes({ scopes: _scopes, ...rest }: ConsentRecord): Omit<ConsentRecord, 'scopes'> {
  return rest;
}

/** `consents`: one remembered consent per user and client, growing by union. */
export function consentTests({ describe, it, storage }: ConformanceSuite): void {
  describe('consents', () => {
    it('find: no consent gives null', async () => {
      isNull(
        await storage().consents.find(freshId('user'), freshId('client')),
        'consents.find must resolve null when the user never consented to the client',
      );
    });

    it('grant: creates the consent, which find then returns', async () => {
      const now = Date.now();
      const [userId, clientId] = [freshId('user'), freshId('client')];
      const granted = await storage().consents.grant(userId, clientId, ['realms:read', 'profile'], now);
      const expected = { userId, clientId, createdAt: now, updatedAt: now };
      sameRecord(withoutScopes(granted), expected, 'consents.grant must resolve the stored consent');
      sameMembers(
        granted.scopes,
        ['realms:read', 'profile'],
        'consents.grant must resolve the granted scopes',
      );
      const found = await storage().consents.find(userId, clientId);
      assert.ok(found, 'consents.find must return the consent consents.grant created');
      sameRecord(withoutScopes(found), expected, 'consents.find must return the consent as granted');
      sameMembers(found.scopes, ['realms:read', 'profile'], 'consents.find must return the granted scopes');
    });

    it('grant: a user and client whose ids run together like another pair are another consent', async () => {
      const now = Date.now();
      const [userId, clientId] = [freshId('user'), freshId('client')];
      // "u…x" + "c…" and "u…" + "xc…" join to the same text: the adapter must keep both apart.
      await storage().consents.grant(`${userId}x`, clientId, ['realms:read'], now);
      isNull(
        await storage().consents.find(userId, `x${clientId}`),
        'consents.find must not return the consent of another user and client whose ids join to the same text',
      );
      await storage().consents.grant(userId, `x${clientId}`, ['profile'], now);
      const first = await storage().consents.find(`${userId}x`, clientId);
      assert.ok(first, "consents.find must still return the first pair's consent");
      sameMembers(first.scopes, ['realms:read'], "a consent must keep its own scopes, not another pair's");
    });

    it('grant again: scopes are the union, createdAt is kept and updatedAt moves', async () => {
      const now = Date.now();
      const [userId, clientId] = [freshId('user'), freshId('client')];
      await storage().consents.grant(userId, clientId, ['a', 'b'], now);
      const later = now + MINUTE;
      const granted = await storage().consents.grant(userId, clientId, ['b', 'c'], later);
      const guarantee =
        'consents.grant on an existing consent must add the new scopes to the old ones (union, each once)';
      sameMembers(granted.scopes, ['a', 'b', 'c'], guarantee);
      const found = await storage().consents.find(userId, clientId);
      assert.ok(found, 'consents.find must return a consent granted twice');
      sameMembers(found.scopes, ['a', 'b', 'c'], `${guarantee}; consents.find disagrees`);
      const times = { createdAt: now, updatedAt: later };
      sameRecord(
        { createdAt: granted.createdAt, updatedAt: granted.updatedAt },
        times,
        'consents.grant on an existing consent must keep its createdAt and set updatedAt to `now`',
      );
      sameRecord(
        { createdAt: found.createdAt, updatedAt: found.updatedAt },
        times,
        'consents.find after a second grant',
      );
    });

    it('revoke: deletes the consent and resolves true, then false', async () => {
      const now = Date.now();
      const [userId, clientId] = [freshId('user'), freshId('client')];
      await storage().consents.grant(userId, clientId, ['a'], now);
      equal(
        await storage().consents.revoke(userId, clientId),
        true,
        'consents.revoke must resolve true when it deleted a consent',
      );
      isNull(
        await storage().consents.find(userId, clientId),
        'consents.find must resolve null after consents.revoke',
      );
      equal(
        await storage().consents.revoke(userId, clientId),
        false,
        'consents.revoke must resolve false when there was no consent to delete',
      );
    });

    it('isolation: each user and client pair has its own consent', async () => {
      const now = Date.now();
      const [alice, bob] = [freshId('user'), freshId('user')];
      const [printer, mailer] = [freshId('client'), freshId('client')];
      await storage().consents.grant(alice, printer, ['print'], now);
      await storage().consents.grant(alice, mailer, ['mail'], now);
      await storage().consents.grant(bob, printer, ['scan'], now);
      const scopesOf = async (userId: string, clientId: string) =>
        (await storage().consents.find(userId, clientId))?.scopes ?? [];
      sameMembers(
        await scopesOf(alice, printer),
        ['print'],
        'consents of one user for one client must not mix with others',
      );
      sameMembers(
        await scopesOf(alice, mailer),
        ['mail'],
        'consents of one user for two clients must stay apart',
      );
      sameMembers(
        await scopesOf(bob, printer),
        ['scan'],
        'consents of two users for one client must stay apart',
      );

      await storage().consents.revoke(alice, printer);
      sameMembers(
        await scopesOf(alice, mailer),
        ['mail'],
        "consents.revoke must keep the user's consent for other clients",
      );
      sameMembers(
        await scopesOf(bob, printer),
        ['scan'],
        "consents.revoke must keep other users' consent for the client",
      );
      isNull(
        await storage().consents.find(bob, mailer),
        'consents.find must resolve null for a pair that never consented',
      );
    });
  });
}
