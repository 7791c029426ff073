import assert from 'node:assert/strict';
import type { SigningKeyRecord } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { sameRecord } from './check.js';
import { freshId } from './fixtures.js';

/** A signing key record with fresh ids; the sealed part is opaque to the store. */
function keyRecord(now: number, overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord {
  return {
    kid: freshId('kid'),
    alg: 'RS256',
    state: 'next',
    publicJwk: JSON.stringify({ kty: 'RSA', n: 'AQAB', e: 'AQAB' }),
    sealedPrivateJwk: `eyJhbGciOiJkaXIifQ..${freshId('sealed')}`,
    createdAt: now,
    activatedAt: null,
    retiredAt: null,
    ...overrides,
  };
}

/** `keys.list` and `keys.save` (OpenID Connect signing keys), present unless declared absent. */
export function keyTests({ part, it, storage }: ConformanceSuite): void {
  const mine = (records: SigningKeyRecord[], kids: readonly string[]) =>
    records.filter((record) => kids.includes(record.kid));

  part('keys')('keys', () => {
    it('save then list round-trips every field, null times included, ordered by createdAt then kid', async () => {
      const now = Date.now();
      const later = keyRecord(now + 2, { state: 'active', activatedAt: now + 3, alg: 'ES256' });
      const first = keyRecord(now);
      const [a, b] = [freshId('kid-a'), freshId('kid-b')].sort();
      const tiedA = keyRecord(now + 1, { kid: b! });
      const tiedB = keyRecord(now + 1, { kid: a! });
      for (const record of [later, tiedA, first, tiedB]) await storage().keys!.save(record);
      const listed = mine(await storage().keys!.list(), [later.kid, tiedA.kid, first.kid, tiedB.kid]);
      assert.deepStrictEqual(
        listed.map((record) => record.kid),
        [first.kid, tiedB.kid, tiedA.kid, later.kid],
        'keys.list must order keys by createdAt, then kid',
      );
      sameRecord(
        listed[0],
        first,
        'keys.list must return every field as saved (activatedAt and retiredAt null)',
      );
      sameRecord(listed[3], later, 'keys.list must return every field as saved (alg, state, activatedAt)');
    });

    it('save replaces the key with the same kid: a rotation moves it from next to active to retired', async () => {
      const now = Date.now();
      const key = keyRecord(now);
      await storage().keys!.save(key);
      const active = { ...key, state: 'active' as const, activatedAt: now + 10 };
      await storage().keys!.save(active);
      const retired = { ...active, state: 'retired' as const, retiredAt: now + 20 };
      await storage().keys!.save(retired);
      const listed = mine(await storage().keys!.list(), [key.kid]);
      assert.equal(listed.length, 1, 'keys.save must replace the key of the same kid, not add a second');
      sameRecord(listed[0], retired, 'keys.save must write every field of the replacement');
    });
  });
}

/** `users.saveClaims` and `users.findClaims` (OpenID Connect's UserInfo), present unless declared absent. */
export function userClaimsTests({ part, it, storage }: ConformanceSuite): void {
  part('userClaims')('users.saveClaims, users.findClaims', () => {
    it('the claims saved last for a subject, whatever the subject; null for one never saved', async () => {
      const users = storage().users;
      const [subject, host] = [freshId('user'), `host-account:${freshId('account')}`];
      assert.equal(
        await users.findClaims!(subject),
        null,
        'users.findClaims must resolve null before any save',
      );
      await users.saveClaims!(subject, { steam_id: '76561198000000042', name: 'Ålice "A" \u{1F511}' });
      await users.saveClaims!(host, { preferred_username: 'alice' });
      assert.deepStrictEqual(
        await users.findClaims!(subject),
        { steam_id: '76561198000000042', name: 'Ålice "A" \u{1F511}' },
        'users.findClaims must return the claims as saved',
      );
      await users.saveClaims!(subject, { steam_id: '76561198000000042' });
      assert.deepStrictEqual(
        await users.findClaims!(subject),
        { steam_id: '76561198000000042' },
        'users.saveClaims must replace the claims of the subject, not merge them',
      );
      assert.deepStrictEqual(
        await users.findClaims!(host),
        { preferred_username: 'alice' },
        "users.saveClaims must keep each subject's claims apart (a host account id is a subject too)",
      );
    });
  });
}
