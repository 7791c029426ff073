import assert from 'node:assert/strict';
import type { FoundTokenRecord, TokenRecord } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { isNull, race, sameRecord } from './check.js';
import {
  HOUR,
  RACERS,
  SECOND,
  accessTokenRecord,
  enrolled,
  freshHash,
  grantRecord,
  refreshTokenRecord,
} from './fixtures.js';

/** `tokens.save` and `tokens.find`: a token with its grant and client, in one read. */
export function tokenTests(suite: ConformanceSuite): void {
  const { describe, it, storage, putClient } = suite;

  async function found(token: TokenRecord, what: string): Promise<FoundTokenRecord> {
    const result = await storage().tokens.find(token.tokenHash);
    assert.ok(result, `tokens.find must return ${what}; it resolved null`);
    return result;
  }

  describe('tokens', () => {
    it('an access token round-trips every field, with its grant and client joined', async () => {
      const now = Date.now();
      const { client, grant } = await enrolled(suite, now);
      const token = accessTokenRecord(now, grant, {
        scopes: ['realms:read', 'profile'],
        resources: ['https://printer.example/mcp'],
      });
      await storage().tokens.save(token);
      const result = await found(token, 'a saved access token');
      sameRecord(result.token, token, 'tokens.find must return every field of the token as saved');
      sameRecord(result.grant, grant, "tokens.find must join the grant whose grantId is the token's");
      sameRecord(result.client, client, "tokens.find must join the client whose clientId is the token's");
    });

    it('saveAll: an access and a refresh token saved at once, each round-trips, and saved again replaces them', async () => {
      const now = Date.now();
      const { grant } = await enrolled(suite, now);
      const access = accessTokenRecord(now, grant, { origin: 'authorization_code' });
      const refresh = refreshTokenRecord(now, grant, { origin: 'authorization_code' });
      await storage().tokens.saveAll([access, refresh]);
      sameRecord(
        (await found(access, 'an access token saved by saveAll')).token,
        access,
        'tokens.saveAll must save the access token as given',
      );
      sameRecord(
        (await found(refresh, 'a refresh token saved by saveAll')).token,
        refresh,
        'tokens.saveAll must save the refresh token as given',
      );
      const rotated = { ...refresh, rotatedAt: now + SECOND };
      await storage().tokens.saveAll([access, rotated]);
      sameRecord(
        (await found(refresh, 'a refresh token saved again')).token,
        rotated,
        'tokens.saveAll must replace a token with the same hash',
      );
    });

    it('a refresh token round-trips expiresAt null and rotatedAt null, then a numeric rotatedAt', async () => {
      const now = Date.now();
      const { grant } = await enrolled(suite, now);
      const token = refreshTokenRecord(now, grant, { origin: 'refresh_token' });
      await storage().tokens.save(token);
      sameRecord(
        (await found(token, 'a saved refresh token')).token,
        token,
        'tokens.find: expiresAt null and rotatedAt null must stay null',
      );
      const rotated = { ...token, rotatedAt: now + SECOND };
      await storage().tokens.save(rotated);
      sameRecord(
        (await found(token, 'a rotated refresh token')).token,
        rotated,
        'tokens.save of the same hash must replace the token (rotatedAt a number)',
      );
    });

    it('an implicit or a client credentials access token round-trips its origin', async () => {
      const now = Date.now();
      const { grant } = await enrolled(suite, now);
      for (const origin of ['implicit', 'client_credentials'] as const) {
        const token = accessTokenRecord(now, grant, { origin, scopes: [] });
        await storage().tokens.save(token);
        sameRecord(
          (await found(token, `an access token of origin ${origin}`)).token,
          token,
          `tokens.find must return origin ${origin} and empty scopes as saved`,
        );
      }
    });

    it('find matches the hash exactly, and gives null for an unknown one', async () => {
      const now = Date.now();
      const { grant } = await enrolled(suite, now);
      const token = accessTokenRecord(now, grant, { tokenHash: `${freshHash()}Ab` });
      await storage().tokens.save(token);
      for (const hash of [
        token.tokenHash.toLowerCase(),
        token.tokenHash.slice(0, -1),
        `${token.tokenHash}x`,
        freshHash(),
      ]) {
        isNull(
          await storage().tokens.find(hash),
          `tokens.find(${JSON.stringify(hash)}) must resolve null (hashes compare exactly)`,
        );
      }
    });

    it('find returns a token whatever its state: expired, rotated, its grant revoked', async () => {
      const now = Date.now();
      const { grant } = await enrolled(suite, now);
      const expired = accessTokenRecord(now - 2 * HOUR, grant);
      const rotated = refreshTokenRecord(now, grant, { rotatedAt: now });
      await storage().tokens.save(expired);
      await storage().tokens.save(rotated);
      const revoked = { ...grant, revokedAt: now + SECOND };
      await storage().grants.save(revoked);
      sameRecord(
        (await found(expired, 'an expired token (the library decides)')).token,
        expired,
        'tokens.find',
      );
      const result = await found(rotated, 'a rotated token of a revoked grant (the library decides)');
      sameRecord(result.token, rotated, 'tokens.find');
      sameRecord(result.grant, revoked, 'tokens.find must join the grant as it is now (revokedAt set)');
    });

    it('find joins the grant by grantId: a token of a replaced grant has grant null, another grant never shows', async () => {
      const now = Date.now();
      const { grant } = await enrolled(suite, now);
      const token = accessTokenRecord(now, grant);
      await storage().tokens.save(token);
      const orphan = accessTokenRecord(now, { ...grant, grantId: `${grant.grantId}-never-saved` });
      await storage().tokens.save(orphan);
      isNull(
        (await found(orphan, 'a token whose grant was never saved')).grant,
        'tokens.find: no grant has this grantId, so grant must be null',
      );
      const next = grantRecord(now + SECOND, { userId: grant.userId, clientId: grant.clientId });
      await storage().grants.save(next);
      isNull(
        (await found(token, 'a token of a replaced grant')).grant,
        "tokens.find must join the grant by the token's grantId, not by user and client: the grant was replaced by another grantId",
      );
    });

    it('find joins the client as it is now: disabled after registration, null if it never existed', async () => {
      const now = Date.now();
      const { client, grant } = await enrolled(suite, now);
      const token = accessTokenRecord(now, grant);
      await storage().tokens.save(token);
      await putClient({ ...client, disabled: true }, true);
      sameRecord(
        (await found(token, 'a token of a disabled client')).client,
        { ...client, disabled: true },
        'tokens.find must join the client as it is now (disabled)',
      );
      const stray = accessTokenRecord(now, { ...grant, clientId: `${client.clientId}-never-registered` });
      await storage().tokens.save(stray);
      isNull(
        (await found(stray, 'a token of an unknown client')).client,
        'tokens.find: no client has this clientId, so client must be null',
      );
    });

    it(`${RACERS} concurrent saves of distinct tokens are all found`, async () => {
      const now = Date.now();
      const { grant } = await enrolled(suite, now);
      const tokens = Array.from({ length: RACERS }, (_, index) =>
        index % 2 ? accessTokenRecord(now, grant) : refreshTokenRecord(now, grant),
      );
      await race('tokens.save', RACERS, (index) => storage().tokens.save(tokens[index]!));
      for (const token of tokens)
        sameRecord((await found(token, 'every token saved concurrently')).token, token, 'tokens.find');
    });

    it('stores a copy: changing the saved or the found scopes changes nothing stored', async () => {
      const now = Date.now();
      const { grant } = await enrolled(suite, now);
      const token = accessTokenRecord(now, grant);
      const saved = structuredClone(token);
      await storage().tokens.save(saved);
      saved.scopes.push('admin');
      const first = await found(token, 'a saved token');
      first.token.scopes.push('admin');
      first.grant?.scopes.push('admin');
      const again = await found(token, 'a saved token');
      sameRecord(again.token, token, 'tokens.save and tokens.find must not share arrays with the caller');
      sameRecord(again.grant, grant, "tokens.find must not share the grant's arrays with the caller");
    });
  });
}
