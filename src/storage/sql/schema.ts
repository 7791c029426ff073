import type { ColumnType } from 'kysely';

/**
 * Epoch milliseconds. PostgreSQL `bigint` arrives from `pg` as a string (it may exceed 2^53), so
 * reads go through `Number()`; writes are numbers.
 */
export type Millis = ColumnType<number | string, number, number>;
export type NullableMillis = ColumnType<number | string | null, number | null, number | null>;

/**
 * The tables of the SQL adapter, as the migrations (migrations.ts) leave them.
 * Scopes are stored space-delimited, as OAuth writes them (a scope token never contains a space).
 * Booleans are integers 0/1, the same on both engines. Every secret column holds a SHA-256 hash;
 * nothing in these tables can be replayed as a credential.
 */
export interface Database {
  oauth_clients: {
    client_id: string;
    application_name: string;
    redirect_uri: string;
    grant_type: string;
    secret_hash: string | null;
    scopes: string;
    /** `null`: all of `scopes`. */
    default_scopes: string | null;
    /** Space-delimited, like scopes (an e-mail address has no space). */
    contacts: ColumnType<string, string | undefined, string>;
    /** Space-delimited, like scopes (a registered URI has no space). */
    post_logout_redirect_uris: ColumnType<string, string | undefined, string>;
    disabled: number;
    require_pkce: ColumnType<number, number | undefined, number>;
    created_at: Millis;
    /** Space-delimited team names; `''`: anyone may use the client. */
    allowed_teams: ColumnType<string, string | undefined, string>;
    /** Space-delimited resource URIs (a URI has no space); `''`: every declared resource. */
    resources: ColumnType<string, string | undefined, string>;
    /** `operator`, `document` or `dynamic`. */
    registered_via: ColumnType<string, string | undefined, string>;
    /** A self-registered client not used yet: removed by prune at this time; `null` otherwise. */
    unused_expires_at: ColumnType<number | string | null, number | null | undefined, number | null>;
    /** The member who made it on the developer page; `null`: the operator's. */
    owner_id: ColumnType<string | null, string | null | undefined, string | null>;
    verified: ColumnType<number, number | undefined, number>;
    awaiting_approval: ColumnType<number, number | undefined, number>;
    description: ColumnType<string | null, string | null | undefined, string | null>;
    homepage_uri: ColumnType<string | null, string | null | undefined, string | null>;
    /** SHA-256 of the secret before the last rotation, accepted until the next column's time. */
    previous_secret_hash: ColumnType<string | null, string | null | undefined, string | null>;
    previous_secret_expires_at: ColumnType<number | string | null, number | null | undefined, number | null>;
  };
  oauth_users: {
    id: string;
    provider: string;
    identifier: string;
    created_at: Millis;
  };
  /** The OpenID Connect claims of a user's last login, as a JSON object (UserInfo serves them). */
  oauth_user_claims: {
    /** The id tokens carry: a user's id, or the host's account id. */
    subject: string;
    claims: string;
  };
  /** One row per user and client; primary key (user_id, client_id), `grant_id` unique. */
  oauth_grants: {
    grant_id: string;
    user_id: string;
    client_id: string;
    scopes: string;
    /** Space-delimited resource URIs; `''`: none. */
    resources: ColumnType<string, string | undefined, string>;
    created_at: Millis;
    updated_at: Millis;
    revoked_at: NullableMillis;
  };
  /** Access and refresh tokens, by hash. */
  oauth_tokens: {
    token_hash: string;
    /** `access_token` or `refresh_token`. */
    type: string;
    grant_id: string;
    client_id: string;
    user_id: string;
    scopes: string;
    /** Space-delimited resource URIs; `''`: bound to none. */
    resources: ColumnType<string, string | undefined, string>;
    created_at: Millis;
    expires_at: NullableMillis;
    origin: string;
    rotated_at: NullableMillis;
  };
  /** The keys that sign ID tokens; the private JWK sealed (a compact JWE), never plaintext. */
  oauth_signing_keys: {
    kid: string;
    alg: string;
    /** `next`, `active` or `retired`. */
    state: string;
    public_jwk: string;
    sealed_private_jwk: string;
    created_at: Millis;
    activated_at: NullableMillis;
    retired_at: NullableMillis;
  };
  /** The `ephemeral` store: codes, sessions, nonces, counters and markers, with expiry. */
  oauth_ephemeral: {
    key: string;
    value: string;
    expires_at: Millis;
  };
  /** Per-app usage: one count per client, UTC day (`YYYY-MM-DD`) and kind (`token`, `refresh`, `bearer`). */
  oauth_usage: {
    client_id: string;
    day: string;
    kind: string;
    /** `bigint`: arrives from `pg` as a string. */
    count: ColumnType<number | string, number, number>;
  };
  /** When each client (`user_id` `''`), and each account with each client, was last used. */
  oauth_usage_last: {
    client_id: string;
    user_id: string;
    last_used_at: Millis;
  };
}
