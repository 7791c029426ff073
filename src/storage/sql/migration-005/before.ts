/**
 * What the moves of migration 005 share: the old tables, as migrations 001 to 004 left them, and
 * how an old row is read.
 */
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database, Millis, NullableMillis } from '../schema.js';

/** The tables migration 005 moves out of, as migrations 001 to 004 left them. */
export interface Before {
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
  oauth_revoked_grants: { grant_id: string; revoked_at: Millis };
  oauth_nonces: { scope: string; nonce: string; expires_at: Millis };
  oauth_sessions: { sid: string; data: string; expires_at: Millis };
  oauth_rate_limits: { key: string; count: number; reset_at: Millis };
}

/** The database as migration 005 sees it: the old tables and the new ones. */
export type Db = Kysely<Before & Database>;

/**
 * In the order they are dropped: the revoked grants last, since moving tokens and codes reads
 * them, so that a table still there never lacks one it is moved with.
 */
export const OLD_TABLES = [
  'oauth_consents',
  'oauth_access_tokens',
  'oauth_refresh_tokens',
  'oauth_codes',
  'oauth_sessions',
  'oauth_nonces',
  'oauth_rate_limits',
  'oauth_revoked_grants',
] as const;

export type OldTable = (typeof OLD_TABLES)[number];

/** Rows read and written per statement while moving. */
export const PAGE = 500;

/** The columns by which an old token or code (aliased `o`) names its user, client and grant. */
interface OldRow {
  grant_id: string;
  user_id: string;
  client_id: string;
}

type OldRowBuilder<T extends OldRow> = ExpressionBuilder<Before & Database & { o: T }, 'o'>;

/** The old row's grant was not revoked: it still worked. */
export function stillWorked<T extends OldRow>(eb: OldRowBuilder<T>) {
  return eb.not(
    eb.exists(
      eb
        .selectFrom('oauth_revoked_grants as r')
        .select('r.grant_id')
        .whereRef('r.grant_id', '=', eb.ref('o.grant_id')),
    ),
  );
}

/** The old row still worked, and its user and client have no grant (no consent). */
export function stillWorkedWithoutGrant<T extends OldRow>(eb: OldRowBuilder<T>) {
  return eb.and([
    stillWorked(eb),
    eb.not(
      eb.exists(
        eb
          .selectFrom('oauth_grants as g')
          .select('g.grant_id')
          .whereRef('g.user_id', '=', eb.ref('o.user_id'))
          .whereRef('g.client_id', '=', eb.ref('o.client_id')),
      ),
    ),
  ]);
}

/** Reads a table a page at a time, in key order, each page after the last row of the one before. */
export async function eachPage<R>(
  read: (after: R | undefined) => Promise<R[]>,
  use: (rows: R[]) => Promise<void>,
): Promise<void> {
  let after: R | undefined;
  for (;;) {
    const rows = await read(after);
    if (rows.length > 0) await use(rows);
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1];
  }
}

/** Scopes as stored, space-delimited. */
export const scopesOf = (text: string) => (text === '' ? [] : text.split(' '));
