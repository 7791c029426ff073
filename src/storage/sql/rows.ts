import { type Insertable, type RawBuilder, type Selectable, sql } from 'kysely';
import type { ClientRecord, GrantRecord, TokenRecord, UserRecord } from '../types.js';
import type { Database } from './schema.js';

/**
 * The columns the queries read, listed rather than `*`: a row holds what its mapper uses, and no
 * more when a later migration adds a column. The row mappers' types check that none is missing.
 */
export const COLUMNS = {
  oauth_clients: [
    'client_id',
    'application_name',
    'redirect_uri',
    'grant_type',
    'secret_hash',
    'scopes',
    'default_scopes',
    'contacts',
    'post_logout_redirect_uris',
    'disabled',
    'require_pkce',
    'created_at',
    'allowed_teams',
    'resources',
    'registered_via',
    'unused_expires_at',
    'owner_id',
    'verified',
    'awaiting_approval',
    'description',
    'homepage_uri',
    'previous_secret_hash',
    'previous_secret_expires_at',
  ],
  oauth_users: ['id', 'provider', 'identifier', 'created_at'],
  oauth_grants: [
    'grant_id',
    'user_id',
    'client_id',
    'scopes',
    'resources',
    'created_at',
    'updated_at',
    'revoked_at',
  ],
  oauth_tokens: [
    'token_hash',
    'type',
    'grant_id',
    'client_id',
    'user_id',
    'scopes',
    'resources',
    'created_at',
    'expires_at',
    'origin',
    'rotated_at',
  ],
} as const;

/**
 * `columns` as one JSON array in text, times as JSON numbers: the drivers build a row at a cost
 * per column (and PostgreSQL describes each), far more than one `JSON.parse`.
 */
export function jsonRow(postgres: boolean, columns: readonly string[]): RawBuilder<string> {
  const array = sql.raw(postgres ? 'json_build_array' : 'json_array');
  return sql<string>`cast(${array}(${sql.join(columns.map((column) => sql.ref(column)))}) as text)`;
}

/** A client of a JSON array of {@link COLUMNS}`.oauth_clients`, in order, that {@link jsonRow} built. */
export function clientOfJson(json: string): ClientRecord {
  return clientOfValues(JSON.parse(json) as unknown[]);
}

/** A client of the values of {@link COLUMNS}`.oauth_clients`, in order. */
export function clientOfValues(values: readonly unknown[]): ClientRecord {
  return toClient(
    Object.fromEntries(COLUMNS.oauth_clients.map((column, i) => [column, values[i]])) as ClientRow,
  );
}

export type ClientRow = Selectable<Database['oauth_clients']>;
export type GrantRow = Selectable<Database['oauth_grants']>;
export type TokenRow = Selectable<Database['oauth_tokens']>;

export const scopeText = (scopes: readonly string[]): string => scopes.join(' ');
export const scopesOf = (text: string): string[] => (text === '' ? [] : text.split(' '));
export const millis = (value: number | string): number => Number(value);
export const millisOrNull = (value: number | string | null): number | null =>
  value === null ? null : Number(value);

export function toClient(row: ClientRow): ClientRecord {
  return {
    clientId: row.client_id,
    applicationName: row.application_name,
    redirectUri: row.redirect_uri,
    grantType: row.grant_type as ClientRecord['grantType'],
    secretHash: row.secret_hash,
    scopes: scopesOf(row.scopes),
    defaultScopes: row.default_scopes === null ? null : scopesOf(row.default_scopes),
    contacts: scopesOf(row.contacts),
    postLogoutRedirectUris: scopesOf(row.post_logout_redirect_uris),
    disabled: row.disabled !== 0,
    requirePkce: row.require_pkce !== 0,
    createdAt: millis(row.created_at),
    ...(row.allowed_teams === '' ? {} : { allowedTeams: scopesOf(row.allowed_teams) }),
    ...(row.resources === '' ? {} : { resources: scopesOf(row.resources) }),
    ...(row.registered_via === 'operator'
      ? {}
      : { registeredVia: row.registered_via as NonNullable<ClientRecord['registeredVia']> }),
    ...(row.unused_expires_at === null ? {} : { unusedExpiresAt: millis(row.unused_expires_at) }),
    ...(row.owner_id === null ? {} : { ownerId: row.owner_id }),
    verified: row.verified !== 0,
    awaitingApproval: row.awaiting_approval !== 0,
    ...(row.description === null ? {} : { description: row.description }),
    ...(row.homepage_uri === null ? {} : { homepageUri: row.homepage_uri }),
    ...(row.previous_secret_hash === null || row.previous_secret_expires_at === null
      ? {}
      : {
          previousSecret: {
            hash: row.previous_secret_hash,
            expiresAt: millis(row.previous_secret_expires_at),
          },
        }),
  };
}

export function clientRow(client: ClientRecord): Insertable<Database['oauth_clients']> {
  return {
    client_id: client.clientId,
    application_name: client.applicationName,
    redirect_uri: client.redirectUri,
    grant_type: client.grantType,
    secret_hash: client.secretHash,
    scopes: scopeText(client.scopes),
    default_scopes: client.defaultScopes == null ? null : scopeText(client.defaultScopes),
    contacts: scopeText(client.contacts ?? []),
    post_logout_redirect_uris: scopeText(client.postLogoutRedirectUris ?? []),
    disabled: client.disabled ? 1 : 0,
    require_pkce: client.requirePkce === true ? 1 : 0,
    created_at: client.createdAt,
    allowed_teams: scopeText(client.allowedTeams ?? []),
    resources: scopeText(client.resources ?? []),
    registered_via: client.registeredVia ?? 'operator',
    unused_expires_at: client.unusedExpiresAt ?? null,
    owner_id: client.ownerId ?? null,
    verified: client.verified === true ? 1 : 0,
    awaiting_approval: client.awaitingApproval === true ? 1 : 0,
    description: client.description ?? null,
    homepage_uri: client.homepageUri ?? null,
    previous_secret_hash: client.previousSecret?.hash ?? null,
    previous_secret_expires_at: client.previousSecret?.expiresAt ?? null,
  };
}

export function toUser(row: Selectable<Database['oauth_users']>): UserRecord {
  return {
    id: row.id,
    identifier: row.identifier,
    provider: row.provider,
    createdAt: millis(row.created_at),
  };
}

export function toGrant(row: GrantRow): GrantRecord {
  return {
    grantId: row.grant_id,
    userId: row.user_id,
    clientId: row.client_id,
    scopes: scopesOf(row.scopes),
    ...(row.resources === '' ? {} : { resources: scopesOf(row.resources) }),
    createdAt: millis(row.created_at),
    updatedAt: millis(row.updated_at),
    revokedAt: millisOrNull(row.revoked_at),
  };
}

export function toToken(row: TokenRow): TokenRecord {
  return {
    tokenHash: row.token_hash,
    type: row.type as TokenRecord['type'],
    grantId: row.grant_id,
    clientId: row.client_id,
    userId: row.user_id,
    scopes: scopesOf(row.scopes),
    ...(row.resources === '' ? {} : { resources: scopesOf(row.resources) }),
    createdAt: millis(row.created_at),
    expiresAt: millisOrNull(row.expires_at),
    origin: row.origin as TokenRecord['origin'],
    rotatedAt: millisOrNull(row.rotated_at),
  };
}
