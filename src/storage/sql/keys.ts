import type { KeyStore, SigningKeyRecord } from '../types.js';
import type { SqlContext } from './context.js';
import { millis, millisOrNull } from './rows.js';

/**
 * The {@link KeyStore} on table `oauth_signing_keys`: a handful of rows, read once a minute by
 * each instance and written by a rotation, so plain Kysely queries, not prepared statements.
 */
export function sqlKeyStore({ db }: SqlContext): KeyStore {
  return {
    async list() {
      const rows = await db
        .selectFrom('oauth_signing_keys')
        .selectAll()
        .orderBy('created_at')
        .orderBy('kid')
        .execute();
      return rows.map((row): SigningKeyRecord => ({
        kid: row.kid,
        alg: row.alg as SigningKeyRecord['alg'],
        state: row.state as SigningKeyRecord['state'],
        publicJwk: row.public_jwk,
        sealedPrivateJwk: row.sealed_private_jwk,
        createdAt: millis(row.created_at),
        activatedAt: millisOrNull(row.activated_at),
        retiredAt: millisOrNull(row.retired_at),
      }));
    },
    async save(key) {
      const row = {
        kid: key.kid,
        alg: key.alg,
        state: key.state,
        public_jwk: key.publicJwk,
        sealed_private_jwk: key.sealedPrivateJwk,
        created_at: key.createdAt,
        activated_at: key.activatedAt,
        retired_at: key.retiredAt,
      };
      await db
        .insertInto('oauth_signing_keys')
        .values(row)
        .onConflict((oc) => oc.column('kid').doUpdateSet(row))
        .execute();
    },
  };
}
