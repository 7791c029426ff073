import type { AccountClaims, UserStore } from '../types.js';
import type { SqlContext } from './context.js';
import { param } from './prepared.js';
import { COLUMNS, toUser } from './rows.js';

/** The {@link UserStore} on table `oauth_users`, unique on (provider, identifier). */
export function sqlUserStore({ db, prepare }: SqlContext): Required<UserStore> {
  // [id, provider, identifier, createdAt]
  const insert = prepare(
    db
      .insertInto('oauth_users')
      .values({ id: param, provider: param, identifier: param, created_at: param })
      .onConflict((oc) => oc.columns(['provider', 'identifier']).doNothing()),
  );
  // [provider, identifier]
  const byIdentity = prepare(
    db
      .selectFrom('oauth_users')
      .select(COLUMNS.oauth_users)
      .where('provider', '=', param)
      .where('identifier', '=', param),
  );
  // [id]
  const byId = prepare(db.selectFrom('oauth_users').select(COLUMNS.oauth_users).where('id', '=', param));

  return {
    async findOrCreate(identity, newId, now) {
      // Insert-or-nothing, then read: concurrent first logins of one identity meet at the
      // unique constraint and all read the one row that won.
      const { provider, identifier } = identity;
      await insert([newId, provider, identifier, now]);
      const [row] = await byIdentity([provider, identifier]);
      if (row === undefined) throw new Error('oauth_users: the user just inserted is missing');
      return toUser(row);
    },
    async find(id) {
      const [row] = await byId([id]);
      return row ? toUser(row) : null;
    },
    async saveClaims(subject, claims) {
      const text = JSON.stringify(claims);
      await db
        .insertInto('oauth_user_claims')
        .values({ subject, claims: text })
        .onConflict((oc) => oc.column('subject').doUpdateSet({ claims: text }))
        .execute();
    },
    async findClaims(subject) {
      const row = await db
        .selectFrom('oauth_user_claims')
        .select('claims')
        .where('subject', '=', subject)
        .executeTakeFirst();
      return row ? (JSON.parse(row.claims) as AccountClaims) : null;
    },
  };
}
