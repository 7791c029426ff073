import type { UserStore } from '../types.js';
import type { SqlContext } from './context.js';
import { COLUMNS, toUser } from './rows.js';

/** The {@link UserStore} on table `oauth_users`, unique on (provider, identifier). */
export function sqlUserStore({ db, prepare }: SqlContext): Required<UserStore> {
  const insertUser = prepare((p: { id: string; provider: string; identifier: string; createdAt: number }) =>
    db
      .insertInto('oauth_users')
      .values({ id: p.id, provider: p.provider, identifier: p.identifier, created_at: p.createdAt })
      .onConflict((oc) => oc.columns(['provider', 'identifier']).doNothing()),
  );
  const findByIdentity = prepare((p: { provider: string; identifier: string }) =>
    db
      .selectFrom('oauth_users')
      .select(COLUMNS.oauth_users)
      .where('provider', '=', p.provider)
      .where('identifier', '=', p.identifier),
  );
  const findById = prepare((p: { id: string }) =>
    db.selectFrom('oauth_users').select(COLUMNS.oauth_users).where('id', '=', p.id),
  );

  return {
    async findOrCreate(identity, newId, now) {
      // Insert-or-nothing, then read: concurrent first logins of one identity meet at the
      // unique constraint and all read the one row that won.
      const { provider, identifier } = identity;
      await insertUser(db, { id: newId, provider, identifier, createdAt: now });
      const [row] = (await findByIdentity(db, { provider, identifier })).rows;
      if (row === undefined) throw new Error('oauth_users: the user just inserted is missing');
      return toUser(row);
    },
    async find(id) {
      const [row] = (await findById(db, { id })).rows;
      return row ? toUser(row) : null;
    },
  };
}
