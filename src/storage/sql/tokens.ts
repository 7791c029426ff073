import type { FoundTokenRecord, TokenRecord, TokenStore } from '../types.js';
import type { SqlContext } from './context.js';
import { type ClientRow, scopeText, toClient, toGrant, toToken } from './rows.js';

/**
 * The {@link TokenStore} on table `oauth_tokens`, one row per access or refresh token, keyed by
 * hash. Both methods are prepared statements: `save` one upsert, `find` one SELECT that joins the
 * token's grant (by `grant_id`, its unique index) and client (by primary key).
 */
export function sqlTokenStore({ db, prepare }: SqlContext): TokenStore {
  const upsert = prepare((p: Omit<TokenRecord, 'scopes'> & { scopes: string }) =>
    db
      .insertInto('oauth_tokens')
      .values({
        token_hash: p.tokenHash,
        type: p.type,
        grant_id: p.grantId,
        client_id: p.clientId,
        user_id: p.userId,
        scopes: p.scopes,
        created_at: p.createdAt,
        expires_at: p.expiresAt,
        origin: p.origin,
        rotated_at: p.rotatedAt,
      })
      .onConflict((oc) =>
        oc.column('token_hash').doUpdateSet((eb) => ({
          type: eb.ref('excluded.type'),
          grant_id: eb.ref('excluded.grant_id'),
          client_id: eb.ref('excluded.client_id'),
          user_id: eb.ref('excluded.user_id'),
          scopes: eb.ref('excluded.scopes'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
          origin: eb.ref('excluded.origin'),
          rotated_at: eb.ref('excluded.rotated_at'),
        })),
      ),
  );
  // Columns listed, not `*` (see COLUMNS in rows.ts); the grant's and client's are prefixed.
  const findWithGrantAndClient = prepare((p: { tokenHash: string }) =>
    db
      .selectFrom('oauth_tokens as t')
      .leftJoin('oauth_grants as g', 'g.grant_id', 't.grant_id')
      .leftJoin('oauth_clients as c', 'c.client_id', 't.client_id')
      .select([
        't.token_hash',
        't.type',
        't.grant_id',
        't.client_id',
        't.user_id',
        't.scopes',
        't.created_at',
        't.expires_at',
        't.origin',
        't.rotated_at',
        'g.grant_id as g_grant_id',
        'g.user_id as g_user_id',
        'g.client_id as g_client_id',
        'g.scopes as g_scopes',
        'g.created_at as g_created_at',
        'g.updated_at as g_updated_at',
        'g.revoked_at as g_revoked_at',
        'c.client_id as c_client_id',
        'c.application_name as c_application_name',
        'c.redirect_uri as c_redirect_uri',
        'c.grant_type as c_grant_type',
        'c.secret_hash as c_secret_hash',
        'c.scopes as c_scopes',
        'c.default_scopes as c_default_scopes',
        'c.contacts as c_contacts',
        'c.disabled as c_disabled',
        'c.require_pkce as c_require_pkce',
        'c.created_at as c_created_at',
      ])
      .where('t.token_hash', '=', p.tokenHash),
  );
  type FoundRow = Awaited<ReturnType<typeof findWithGrantAndClient>>['rows'][number];

  return {
    async save(token) {
      await upsert(db, { ...token, scopes: scopeText(token.scopes) });
    },
    async find(tokenHash) {
      const [row] = (await findWithGrantAndClient(db, { tokenHash })).rows;
      return row ? found(row) : null;
    },
  };

  function found(row: FoundRow): FoundTokenRecord {
    const token = toToken(row);
    const grant =
      row.g_grant_id === null
        ? null
        : toGrant({
            grant_id: row.g_grant_id,
            user_id: row.g_user_id!,
            client_id: row.g_client_id!,
            scopes: row.g_scopes!,
            created_at: row.g_created_at!,
            updated_at: row.g_updated_at!,
            revoked_at: row.g_revoked_at,
          });
    const client =
      row.c_client_id === null
        ? null
        : toClient({
            client_id: row.c_client_id,
            application_name: row.c_application_name!,
            redirect_uri: row.c_redirect_uri!,
            grant_type: row.c_grant_type!,
            secret_hash: row.c_secret_hash,
            scopes: row.c_scopes!,
            default_scopes: row.c_default_scopes,
            contacts: row.c_contacts!,
            disabled: row.c_disabled!,
            require_pkce: row.c_require_pkce!,
            created_at: row.c_created_at!,
          } satisfies ClientRow);
    return { token, grant, client };
  }
}
