import type { FoundTokenRecord, TokenRecord, TokenStore } from '../types.js';
import type { SqlContext } from './context.js';
import { param } from './prepared.js';
import { clientOfValues, COLUMNS, jsonRow, scopeText, toGrant, toToken } from './rows.js';

/**
 * The {@link TokenStore} on table `oauth_tokens`, one row per access or refresh token, keyed by
 * hash. Every method is a prepared statement: `save` and `saveAll` one upsert of their rows (all
 * or none), `find` one SELECT that joins the
 * token's grant (by `grant_id`, its unique index) and client (by primary key).
 *
 * `find` reads the joined row as one JSON array, in the order of FOUND_COLUMNS: the drivers build
 * a row of 34 columns (and PostgreSQL describes it) at a cost per column, far more than one
 * `JSON.parse`.
 */
export function sqlTokenStore({ db, postgres, prepare }: SqlContext): TokenStore {
  // [tokenHash, type, grantId, clientId, userId, scopes, resources, createdAt, expiresAt, origin, rotatedAt] per token
  const upsert = (count: number) =>
    prepare(
      db
        .insertInto('oauth_tokens')
        .values(Array.from({ length: count }, () => ({ ...TOKEN_PARAMS })))
        .onConflict((oc) =>
          oc.column('token_hash').doUpdateSet((eb) => ({
            type: eb.ref('excluded.type'),
            grant_id: eb.ref('excluded.grant_id'),
            client_id: eb.ref('excluded.client_id'),
            user_id: eb.ref('excluded.user_id'),
            scopes: eb.ref('excluded.scopes'),
            resources: eb.ref('excluded.resources'),
            created_at: eb.ref('excluded.created_at'),
            expires_at: eb.ref('excluded.expires_at'),
            origin: eb.ref('excluded.origin'),
            rotated_at: eb.ref('excluded.rotated_at'),
          })),
        ),
    );
  // One statement per number of tokens: the library saves one or two at once.
  const upserts = new Map<number, ReturnType<typeof upsert>>();
  const saveAll = async (tokens: readonly TokenRecord[]) => {
    if (tokens.length === 0) return;
    let run = upserts.get(tokens.length);
    if (run === undefined) upserts.set(tokens.length, (run = upsert(tokens.length)));
    await run(tokens.flatMap(valuesOf));
  };
  // [tokenHash]
  const withGrantAndClient = prepare(foundQuery({ db, postgres }));

  return {
    save: (token) => saveAll([token]),
    saveAll,
    async find(tokenHash) {
      const [row] = await withGrantAndClient([tokenHash]);
      return row ? found(row.found) : null;
    },
  };
}

/** The columns of a token row, each a parameter, in the order of {@link valuesOf}. */
const TOKEN_PARAMS = {
  token_hash: param,
  type: param,
  grant_id: param,
  client_id: param,
  user_id: param,
  scopes: param,
  resources: param,
  created_at: param,
  expires_at: param,
  origin: param,
  rotated_at: param,
} as const;

/** The values of a token row, in the order of {@link TOKEN_PARAMS}. */
function valuesOf(token: TokenRecord): unknown[] {
  return [
    token.tokenHash,
    token.type,
    token.grantId,
    token.clientId,
    token.userId,
    scopeText(token.scopes),
    scopeText(token.resources ?? []),
    token.createdAt,
    token.expiresAt,
    token.origin,
    token.rotatedAt,
  ];
}

/**
 * `find`'s query, one JSON array of {@link FOUND_COLUMNS} as `found`, for the token whose hash is
 * its one parameter; the storage reader runs it as a subquery.
 */
export function foundQuery({ db, postgres }: Pick<SqlContext, 'db' | 'postgres'>) {
  return db
    .selectFrom('oauth_tokens as t')
    .leftJoin('oauth_grants as g', 'g.grant_id', 't.grant_id')
    .leftJoin('oauth_clients as c', 'c.client_id', 't.client_id')
    .select(jsonRow(postgres, FOUND_COLUMNS).as('found'))
    .where('t.token_hash', '=', param);
}

/**
 * What `find` reads, in the order of {@link FoundRow}: the token, its grant, then its client in
 * the order of {@link COLUMNS}`.oauth_clients` (one list of a client's columns, read here too).
 */
const FOUND_COLUMNS = [
  't.token_hash',
  't.type',
  't.grant_id',
  't.client_id',
  't.user_id',
  't.scopes',
  't.resources',
  't.created_at',
  't.expires_at',
  't.origin',
  't.rotated_at',
  'g.grant_id',
  'g.user_id',
  'g.client_id',
  'g.scopes',
  'g.resources',
  'g.created_at',
  'g.updated_at',
  'g.revoked_at',
  ...COLUMNS.oauth_clients.map((column) => `c.${column}` as const),
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
  resources: string,
  createdAt: Millis,
  expiresAt: Millis | null,
  origin: string,
  rotatedAt: Millis | null,
  grantGrantId: string | null,
  grantUserId: string,
  grantClientId: string,
  grantScopes: string,
  grantResources: string,
  grantCreatedAt: Millis,
  grantUpdatedAt: Millis,
  grantRevokedAt: Millis | null,
  ...client: unknown[],
];

/** The token, grant and client of a JSON array that {@link foundQuery} read. */
export function found(json: string): FoundTokenRecord {
  const [
    token_hash,
    type,
    grant_id,
    client_id,
    user_id,
    scopes,
    resources,
    created_at,
    expires_at,
    origin,
    rotated_at,
    g_grant_id,
    g_user_id,
    g_client_id,
    g_scopes,
    g_resources,
    g_created_at,
    g_updated_at,
    g_revoked_at,
    ...clientValues
  ] = JSON.parse(json) as FoundRow;
  const token = toToken({
    token_hash,
    type,
    grant_id,
    client_id,
    user_id,
    scopes,
    resources,
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
          resources: g_resources,
          created_at: g_created_at,
          updated_at: g_updated_at,
          revoked_at: g_revoked_at,
        });
  const client = clientValues[0] === null ? null : clientOfValues(clientValues);
  return { token, grant, client };
}
