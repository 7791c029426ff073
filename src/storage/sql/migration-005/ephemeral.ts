import type { Insertable } from 'kysely';
import { ephemeralKeys, type StoredCode, type UsedCode } from '../../keys.js';
import type { Database } from '../schema.js';
import { type Db, eachPage, PAGE, scopesOf, stillWorked } from './before.js';

/** Unexpired codes of grants not revoked, as the JSON the library keeps in the ephemeral store. */
export async function moveCodes(db: Db, now: number): Promise<void> {
  await eachPage(
    (after: { code_hash: string } | undefined) =>
      db
        .selectFrom('oauth_codes as o')
        .innerJoin('oauth_grants as g', (join) =>
          join.onRef('g.user_id', '=', 'o.user_id').onRef('g.client_id', '=', 'o.client_id'),
        )
        .selectAll('o')
        .select('g.grant_id as new_grant_id')
        .where('o.expires_at', '>', now)
        .where(stillWorked)
        .$if(after !== undefined, (qb) => qb.where('o.code_hash', '>', after!.code_hash))
        .orderBy('o.code_hash')
        .limit(PAGE)
        .execute(),
    (codes) =>
      insertEphemeral(
        db,
        codes.map((code) => {
          const expiresAt = Number(code.expires_at);
          if (code.used_at !== null) {
            const used: UsedCode = {
              grantId: code.new_grant_id,
              clientId: code.client_id,
              userId: code.user_id,
            };
            return {
              key: ephemeralKeys.usedCode(code.code_hash),
              value: JSON.stringify(used),
              expires_at: expiresAt,
            };
          }
          const stored: StoredCode = {
            clientId: code.client_id,
            userId: code.user_id,
            redirectUri: code.redirect_uri,
            scopes: scopesOf(code.scopes),
            grantId: code.new_grant_id,
            codeChallenge: code.code_challenge,
            codeChallengeMethod: code.code_challenge_method === 'S256' ? 'S256' : null,
            createdAt: Number(code.created_at),
            expiresAt,
          };
          return {
            key: ephemeralKeys.code(code.code_hash),
            value: JSON.stringify(stored),
            expires_at: expiresAt,
          };
        }),
      ),
  );
}

/** Unexpired login sessions, their JSON as it was. */
export async function moveSessions(db: Db, now: number): Promise<void> {
  await eachPage(
    (after: { sid: string } | undefined) =>
      db
        .selectFrom('oauth_sessions')
        .selectAll()
        .where('expires_at', '>', now)
        .$if(after !== undefined, (qb) => qb.where('sid', '>', after!.sid))
        .orderBy('sid')
        .limit(PAGE)
        .execute(),
    (sessions) =>
      insertEphemeral(
        db,
        sessions.map((s) => ({
          key: ephemeralKeys.session(s.sid),
          value: s.data,
          expires_at: Number(s.expires_at),
        })),
      ),
  );
}

/** Unexpired OpenID nonces, each under the key of its OP endpoint and value. */
export async function moveNonces(db: Db, now: number): Promise<void> {
  await eachPage(
    (after: { scope: string; nonce: string } | undefined) =>
      db
        .selectFrom('oauth_nonces')
        .selectAll()
        .where('expires_at', '>', now)
        .$if(after !== undefined, (qb) =>
          qb.where((eb) => eb(eb.refTuple('scope', 'nonce'), '>', eb.tuple(after!.scope, after!.nonce))),
        )
        .orderBy('scope')
        .orderBy('nonce')
        .limit(PAGE)
        .execute(),
    (nonces) =>
      insertEphemeral(
        db,
        nonces.map((n) => ({
          key: ephemeralKeys.nonce(n.scope, n.nonce),
          value: '1',
          expires_at: Number(n.expires_at),
        })),
      ),
  );
}

/** A counter's count as text, expiring when its window ended. */
export async function moveRateLimits(db: Db, now: number): Promise<void> {
  await eachPage(
    (after: { key: string } | undefined) =>
      db
        .selectFrom('oauth_rate_limits')
        .selectAll()
        .where('reset_at', '>', now)
        .$if(after !== undefined, (qb) => qb.where('key', '>', after!.key))
        .orderBy('key')
        .limit(PAGE)
        .execute(),
    (counters) =>
      insertEphemeral(
        db,
        counters.map((c) => ({
          key: ephemeralKeys.rateLimit(c.key),
          value: String(c.count),
          expires_at: Number(c.reset_at),
        })),
      ),
  );
}

/** Inserts entries under keys not yet taken: a key already there keeps what it holds. */
async function insertEphemeral(db: Db, rows: Insertable<Database['oauth_ephemeral']>[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('oauth_ephemeral')
    .values(rows)
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
}
