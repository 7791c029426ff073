import { sql } from 'kysely';
import type { FoundTokenRecord, TokenRecord, TokenStore } from '../types.js';
import type { SqlContext } from './context.js';
import { COLUMNS, scopeText, toClient, toGrant, toToken } from './rows.js';

/** The upsert of `tokens.save`, prepared: one row of `oauth_tokens`, replaced by hash. */
export function prepareTokenUpsert({ db, prepare }: Pick<SqlContext, 'db' | 'prepare'>) {
  return prepare((p: Omit<TokenRecord, 'scopes'> & { scopes: string }) =>
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
}

/**
 * The insert of a batch's `tokens.saveFrom`, prepared: the new token's own columns, and the
 * client, user, grant and scopes of the refresh token `from` of `clientId`; nothing without it.
 * Returns the new hash when it inserted.
 */
export function prepareTokenSaveFrom({ db, prepare }: Pick<SqlContext, 'db' | 'prepare'>) {
  return prepare(
    (p: {
      from: string;
      clientId: string;
      tokenHash: string;
      type: TokenRecord['type'];
      createdAt: number;
      expiresAt: number | null;
      origin: TokenRecord['origin'];
    }) =>
      db
        .insertInto('oauth_tokens')
        .columns(COLUMNS.oauth_tokens)
        .expression((eb) =>
          eb
            .selectFrom('oauth_tokens as f')
            .select([
              eb.val(p.tokenHash).as('token_hash'),
              eb.val(p.type).as('type'),
              'f.grant_id',
              'f.client_id',
              'f.user_id',
              'f.scopes',
              eb.val(p.createdAt).as('created_at'),
              eb.val(p.expiresAt).as('expires_at'),
              eb.val(p.origin).as('origin'),
              sql<null>`null`.as('rotated_at'),
            ])
            .where('f.token_hash', '=', p.from)
            .where('f.type', '=', 'refresh_token')
            .where('f.client_id', '=', p.clientId),
        )
        .returning('token_hash'),
  );
}

/**
 * The {@link TokenStore} on table `oauth_tokens`, one row per access or refresh token, keyed by
 * hash. Both methods are prepared statements: `save` one upsert, `find` one SELECT that joins the
 * token's grant (by `grant_id`, its unique index) and client (by primary key).
 */
export function sqlTokenStore(ctx: SqlContext): TokenStore {
  const { db } = ctx;
  const upsert = prepareTokenUpsert(ctx);
  const findWithGrantAndClient = prepareTokenFind(ctx);

  return {
    async save(token) {
      await upsert(db, { ...token, scopes: scopeText(token.scopes) });
    },
    async find(tokenHash) {
      return foundTokenOf((await findWithGrantAndClient(db, { tokenHash })).rows);
    },
  };
}

/**
 * The read of `tokens.find`, prepared: the token joined with its grant (by `grant_id`, its unique
 * index) and client (by primary key). The row comes as one JSON array, in the order of
 * FOUND_COLUMNS: the drivers build a row of 28 columns (and PostgreSQL describes it) at a cost per
 * column, far more than one JSON.parse.
 */
export function prepareTokenFind({ db, postgres, prepare }: Pick<SqlContext, 'db' | 'postgres' | 'prepare'>) {
  const jsonArray = postgres ? 'json_build_array' : 'json_array';
  return prepare((p: { tokenHash: string }) =>
    db
      .selectFrom('oauth_tokens as t')
      .leftJoin('oauth_grants as g', 'g.grant_id', 't.grant_id')
      .leftJoin('oauth_clients as c', 'c.client_id', 't.client_id')
      .select(
        sql<string>`cast(${sql.raw(jsonArray)}(${sql.join(FOUND_COLUMNS.map((column) => sql.ref(column)))}) as text)`.as(
          'found',
        ),
      )
      .where('t.token_hash', '=', p.tokenHash),
  );
}

/** What `tokens.find` resolves from its rows. */
export const foundTokenOf = (rows: readonly { found: string }[]): FoundTokenRecord | null =>
  rows[0] ? found(JSON.parse(rows[0].found) as FoundRow) : null;

/** What `find` reads, in the order of {@link FoundRow}: the token, its grant, its client. */
const FOUND_COLUMNS = [
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
  'g.grant_id',
  'g.user_id',
  'g.client_id',
  'g.scopes',
  'g.created_at',
  'g.updated_at',
  'g.revoked_at',
  'c.client_id',
  'c.application_name',
  'c.redirect_uri',
  'c.grant_type',
  'c.secret_hash',
  'c.scopes',
  'c.default_scopes',
  'c.contacts',
  'c.disabled',
  'c.require_pkce',
  'c.created_at',
] as const;

type Millis = number;

/**
 * The JSON array `find` reads: {@link FOUND_COLUMNS}, in order, times as JSON numbers. The grant's
 * and the client's are all `null` when the join found none (their first, the key, tells).
 */
type FoundRow = [
  tokenHash: string,
  type: string,
  grantId: string,
  clientId: string,
  userId: string,
  scopes: string,
  createdAt: Millis,
  expiresAt: Millis | null,
  origin: string,
  rotatedAt: Millis | null,
  grantGrantId: string | null,
  grantUserId: string,
  grantClientId: string,
  grantScopes: string,
  grantCreatedAt: Millis,
  grantUpdatedAt: Millis,
  grantRevokedAt: Millis | null,
  clientClientId: string | null,
  clientApplicationName: string,
  clientRedirectUri: string,
  clientGrantType: string,
  clientSecretHash: string | null,
  clientScopes: string,
  clientDefaultScopes: string | null,
  clientContacts: string,
  clientDisabled: number,
  clientRequirePkce: number,
  clientCreatedAt: Millis,
];

function found(row: FoundRow): FoundTokenRecord {
  const [
    token_hash,
    type,
    grant_id,
    client_id,
    user_id,
    scopes,
    created_at,
    expires_at,
    origin,
    rotated_at,
    g_grant_id,
    g_user_id,
    g_client_id,
    g_scopes,
    g_created_at,
    g_updated_at,
    g_revoked_at,
    c_client_id,
    application_name,
    redirect_uri,
    grant_type,
    secret_hash,
    c_scopes,
    default_scopes,
    contacts,
    disabled,
    require_pkce,
    c_created_at,
  ] = row;
  const token = toToken({
    token_hash,
    type,
    grant_id,
    client_id,
    user_id,
    scopes,
    created_at,
    expires_at,
    origin,
    rotated_at,
  });
  const grant =
    g_grant_id === null
      ? null
      : toGrant({
          grant_id: g_grant_id,
          user_id: g_user_id,
          client_id: g_client_id,
          scopes: g_scopes,
          created_at: g_created_at,
          updated_at: g_updated_at,
          revoked_at: g_revoked_at,
        });
  const client =
    c_client_id === null
      ? null
      : toClient({
          client_id: c_client_id,
          application_name,
          redirect_uri,
          grant_type,
          secret_hash,
          scopes: c_scopes,
          default_scopes,
          contacts,
          disabled,
          require_pkce,
          created_at: c_created_at,
        });
  return { token, grant, client };
}
