import type { Updateable } from 'kysely';
import type { ClientChanges, ClientRecord, ClientStore } from '../types.js';
import type { SqlContext } from './context.js';
import { param } from './prepared.js';
import { clientRow, COLUMNS, scopeText, toClient } from './rows.js';
import type { Database } from './schema.js';

/**
 * The {@link ClientStore} on table `oauth_clients`, operator methods included. `find` is a
 * prepared primary-key lookup; the operator methods are built per call.
 */
export function sqlClientStore({ db, prepare }: SqlContext): Required<ClientStore> {
  // [clientId]
  const byId = prepare(
    db.selectFrom('oauth_clients').select(COLUMNS.oauth_clients).where('client_id', '=', param),
  );
  const find = async (clientId: string): Promise<ClientRecord | null> => {
    const [row] = await byId([clientId]);
    return row ? toClient(row) : null;
  };

  return {
    find,
    async create(client) {
      await db.insertInto('oauth_clients').values(clientRow(client)).execute();
    },
    async list(filter = {}) {
      let query = db.selectFrom('oauth_clients').select(COLUMNS.oauth_clients);
      if (filter.ownerId !== undefined) query = query.where('owner_id', '=', filter.ownerId);
      const rows = await query.orderBy('created_at').orderBy('client_id').execute();
      return rows.map(toClient);
    },
    async update(clientId, changes) {
      const set = columnChanges(changes);
      if (Object.keys(set).length === 0) return find(clientId);
      const row = await db
        .updateTable('oauth_clients')
        .set(set)
        .where('client_id', '=', clientId)
        .returning(COLUMNS.oauth_clients)
        .executeTakeFirst();
      return row ? toClient(row) : null;
    },
    /**
     * Deletes the client and its grants in one transaction. Without its grant no token of the
     * client can work again, even for a client registered later under the same id (a grant id is
     * never reused); the tokens themselves go at the next `prune`.
     */
    async remove(clientId) {
      return db.transaction().execute(async (trx) => {
        await trx.deleteFrom('oauth_grants').where('client_id', '=', clientId).execute();
        const removed = await trx
          .deleteFrom('oauth_clients')
          .where('client_id', '=', clientId)
          .executeTakeFirst();
        return removed.numDeletedRows > 0n;
      });
    },
  };
}

/** The columns `changes` sets; a key whose value is `undefined` is no change. */
function columnChanges(changes: ClientChanges): Updateable<Database['oauth_clients']> {
  const set: Updateable<Database['oauth_clients']> = {};
  if (changes.applicationName !== undefined) set.application_name = changes.applicationName;
  if (changes.redirectUri !== undefined) set.redirect_uri = changes.redirectUri;
  if (changes.grantType !== undefined) set.grant_type = changes.grantType;
  if (changes.secretHash !== undefined) set.secret_hash = changes.secretHash;
  if (changes.scopes !== undefined) set.scopes = scopeText(changes.scopes);
  if (changes.defaultScopes !== undefined) {
    set.default_scopes = changes.defaultScopes === null ? null : scopeText(changes.defaultScopes);
  }
  if (changes.contacts !== undefined) set.contacts = scopeText(changes.contacts);
  if (changes.postLogoutRedirectUris !== undefined) {
    set.post_logout_redirect_uris = scopeText(changes.postLogoutRedirectUris);
  }
  if (changes.disabled !== undefined) set.disabled = changes.disabled ? 1 : 0;
  if (changes.requirePkce !== undefined) set.require_pkce = changes.requirePkce ? 1 : 0;
  if (changes.allowedTeams !== undefined) set.allowed_teams = scopeText(changes.allowedTeams);
  if (changes.resources !== undefined) set.resources = scopeText(changes.resources);
  if (changes.registeredVia !== undefined) set.registered_via = changes.registeredVia;
  if (changes.unusedExpiresAt !== undefined) set.unused_expires_at = changes.unusedExpiresAt;
  if (changes.ownerId !== undefined) set.owner_id = changes.ownerId;
  if (changes.verified !== undefined) set.verified = changes.verified ? 1 : 0;
  if (changes.awaitingApproval !== undefined) set.awaiting_approval = changes.awaitingApproval ? 1 : 0;
  if (changes.description !== undefined) set.description = changes.description;
  if (changes.homepageUri !== undefined) set.homepage_uri = changes.homepageUri;
  if (changes.previousSecret !== undefined) {
    set.previous_secret_hash = changes.previousSecret?.hash ?? null;
    set.previous_secret_expires_at = changes.previousSecret?.expiresAt ?? null;
  }
  return set;
}
