import type { ColumnType } from 'kysely';

/**
 * Epoch milliseconds. PostgreSQL `bigint` arrives from `pg` as a string (it may exceed 2^53), so
 * reads go through `Number()`; writes are numbers.
 */
export type Millis = ColumnType<number | string, number, number>;
type NullableMillis = ColumnType<number | string | null, number | null, number | null>;

/**
 * The tables of the SQL adapter. Scopes are stored space-delimited, as OAuth writes them (a scope
 * token never contains a space). Booleans are integers 0/1, the same on both engines. Every
 * secret column holds a SHA-256 hash; nothing in these tables can be replayed as a credential.
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
    disabled: number;
    require_pkce: ColumnType<number, number | undefined, number>;
    created_at: Millis;
  };
  oauth_users: {
    id: string;
    provider: string;
    identifier: string;
    created_at: Millis;
  };
  oauth_consents: {
    user_id: string;
    client_id: string;
    scopes: string;
    created_at: Millis;
    updated_at: Millis;
  };
  oauth_codes: {
    code_hash: string;
    client_id: string;
    user_id: string;
    redirect_uri: string;
    scopes: string;
    grant_id: string;
    code_challenge: string | null;
    code_challenge_method: string | null;
    created_at: Millis;
    expires_at: Millis;
    used_at: NullableMillis;
  };
  oauth_access_tokens: {
    token_hash: string;
    grant_id: string;
    client_id: string;
    user_id: string;
    scopes: string;
    origin: string;
    created_at: Millis;
    expires_at: Millis;
  };
  oauth_refresh_tokens: {
    token_hash: string;
    grant_id: string;
    client_id: string;
    user_id: string;
    scopes: string;
    created_at: Millis;
    expires_at: NullableMillis;
    rotated_at: NullableMillis;
  };
  /** Grants revoked (code replay, refresh reuse): tokens saved under them late are never found. */
  oauth_revoked_grants: {
    grant_id: string;
    revoked_at: Millis;
  };
  oauth_nonces: {
    scope: string;
    nonce: string;
    expires_at: Millis;
  };
  /** Client-authentication failure counters, in fixed windows. */
  oauth_rate_limits: {
    key: string;
    count: number;
    reset_at: Millis;
  };
  oauth_sessions: {
    sid: string;
    data: string;
    expires_at: Millis;
  };
}
