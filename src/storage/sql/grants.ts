import type { GrantRecord, GrantStore } from '../types.js';
import type { SqlContext } from './context.js';
import { param } from './prepared.js';
import { COLUMNS, scopeText, toGrant } from './rows.js';

/**
 * The {@link GrantStore} on table `oauth_grants`: primary key (user_id, client_id), `grant_id`
 * unique, indexed by client and by revocation time (for `prune`).
 */
export function sqlGrantStore({ db, prepare }: SqlContext): GrantStore {
  // [userId, clientId]: a primary-key lookup.
  const byPair = prepare(
    db
      .selectFrom('oauth_grants')
      .select(COLUMNS.oauth_grants)
      .where('user_id', '=', param)
      .where('client_id', '=', param),
  );
  // One upsert on the (user_id, client_id) key: a grant of the pair, whatever its grant_id, is
  // overwritten in place; a grant_id taken by another pair violates its unique index and rejects.
  const upsert = prepare(
    db
      .insertInto('oauth_grants')
      .values({
        grant_id: param,
        user_id: param,
        client_id: param,
        scopes: param,
        resources: param,
        created_at: param,
        updated_at: param,
        revoked_at: param,
      })
      .onConflict((oc) =>
        oc.columns(['user_id', 'client_id']).doUpdateSet((eb) => ({
          grant_id: eb.ref('excluded.grant_id'),
          scopes: eb.ref('excluded.scopes'),
          resources: eb.ref('excluded.resources'),
          created_at: eb.ref('excluded.created_at'),
          updated_at: eb.ref('excluded.updated_at'),
          revoked_at: eb.ref('excluded.revoked_at'),
        })),
      ),
  );
  const row = (grant: GrantRecord) => [
    grant.grantId,
    grant.userId,
    grant.clientId,
    scopeText(grant.scopes),
    scopeText(grant.resources ?? []),
    grant.createdAt,
    grant.updatedAt,
    grant.revokedAt,
  ];

  return {
    async list({ userId, clientId }) {
      if (userId !== undefined && clientId !== undefined)
        return (await byPair([userId, clientId])).map(toGrant);
      const rows = await db
        .selectFrom('oauth_grants')
        .select(COLUMNS.oauth_grants)
        .$if(userId !== undefined, (qb) => qb.where('user_id', '=', userId!))
        .$if(clientId !== undefined, (qb) => qb.where('client_id', '=', clientId!))
        .orderBy('created_at')
        .orderBy('client_id')
        .orderBy('user_id')
        .execute();
      return rows.map(toGrant);
    },
    async save(grant) {
      for (let attempt = 1; ; attempt++) {
        try {
          await upsert(row(grant));
          return;
        } catch (err) {
          if (attempt === SAVE_ATTEMPTS || !(isGrantIdConflict(err) || isDeadlock(err))) throw err;
        }
      }
    },
  };
}

/**
 * PostgreSQL arbitrates an upsert on one unique index only, (user_id, client_id) here. Saves that
 * insert the same grant at once (its row just deleted, say by a client removal) therefore meet at
 * the `grant_id` index, and all but one fail there. Tried again, such a save finds the row the
 * winner inserted and updates it; a `grant_id` genuinely taken by another user or client fails
 * every attempt and rejects. Saves racing on both indexes can also deadlock (40P01): PostgreSQL
 * then aborts one of them, which is safe to run again.
 */
const SAVE_ATTEMPTS = 5;

function isDeadlock(err: unknown): boolean {
  return (err as { code?: unknown }).code === '40P01';
}

function isGrantIdConflict(err: unknown): boolean {
  const { code, constraint } = err as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'oauth_grants_grant_id';
}
