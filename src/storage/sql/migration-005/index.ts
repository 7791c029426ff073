import { type Kysely, type Migration, sql, SqliteAdapter } from 'kysely';
import { type Db, OLD_TABLES, type OldTable } from './before.js';
import {
  grantsForPairsWithoutConsent,
  grantsFromConsents,
  moveAccessTokens,
  moveRefreshTokens,
} from './durable.js';
import { moveCodes, moveNonces, moveRateLimits, moveSessions } from './ephemeral.js';

/**
 * `2026-11-25-005-storage-by-lifetime`: the storage contract by lifetime. Creates
 * `oauth_ephemeral`, `oauth_grants` and `oauth_tokens`, moves into them everything of the old
 * tables that still works, and drops the old tables. It reads the clock once, as `now`:
 *
 * - each consent becomes a grant with a new random `grant_id`, not revoked. A user and client
 *   with a live token or an unused code but no consent get a grant too, with the scopes of those
 *   tokens and codes, since these worked without one;
 * - unexpired access and refresh tokens move to `oauth_tokens`, re-pointed to the grant of their
 *   user and client, unless their old grant was revoked (they no longer worked). Refresh tokens
 *   keep `rotated_at`, so a rotated one presented again still reveals a leak; their `origin`,
 *   which was not recorded, becomes `authorization_code`;
 * - unexpired codes move to the ephemeral store under `ephemeralKeys.code` (unused) or
 *   `ephemeralKeys.usedCode` (used, so a replay still revokes the grant), re-pointed too;
 *   codes of a revoked grant stay behind;
 * - unexpired sessions, nonces and rate-limit counters move under their ephemeral keys, a
 *   counter's count as text and its expiry its `reset_at`.
 *
 * On PostgreSQL it runs in the migrator's transaction: all or nothing, once. SQLite runs each
 * statement on its own (see migrations.ts), so a crash can stop it half way and two processes
 * starting at once can both run it; every step is therefore idempotent. A grant is inserted only
 * for a user and client without one, and whatever moves re-points to the grant the table holds
 * then; rows are inserted only under keys not yet taken; a step runs only while its old table is
 * there, and the old tables are dropped last. Running it again finishes the move. There is no
 * `down`: grant ids and the codes' JSON cannot be turned back into the old rows.
 */
export const storageByLifetime: Migration = {
  async up(untyped: Kysely<unknown>) {
    const db = untyped as Db;
    const now = Date.now();
    await createTables(db);
    const old = await oldTables(db);
    if (old.has('oauth_consents')) await grantsFromConsents(db);
    await grantsForPairsWithoutConsent(db, now, old);
    if (old.has('oauth_access_tokens')) await moveAccessTokens(db, now);
    if (old.has('oauth_refresh_tokens')) await moveRefreshTokens(db, now);
    if (old.has('oauth_codes')) await moveCodes(db, now);
    if (old.has('oauth_sessions')) await moveSessions(db, now);
    if (old.has('oauth_nonces')) await moveNonces(db, now);
    if (old.has('oauth_rate_limits')) await moveRateLimits(db, now);
    for (const table of OLD_TABLES) await db.schema.dropTable(table).ifExists().execute();
  },
};

async function createTables(db: Db): Promise<void> {
  await db.schema
    .createTable('oauth_ephemeral')
    .ifNotExists()
    .addColumn('key', 'text', (col) => col.primaryKey())
    .addColumn('value', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('oauth_ephemeral_expires_at')
    .ifNotExists()
    .on('oauth_ephemeral')
    .column('expires_at')
    .execute();

  await db.schema
    .createTable('oauth_grants')
    .ifNotExists()
    .addColumn('grant_id', 'text', (col) => col.notNull())
    .addColumn('user_id', 'text', (col) => col.notNull())
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('scopes', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .addColumn('revoked_at', 'bigint')
    .addPrimaryKeyConstraint('oauth_grants_pk', ['user_id', 'client_id'])
    .addUniqueConstraint('oauth_grants_grant_id', ['grant_id'])
    .execute();
  // Listing and removing by client (the primary key serves the user).
  await db.schema
    .createIndex('oauth_grants_client_id')
    .ifNotExists()
    .on('oauth_grants')
    .column('client_id')
    .execute();
  // Prune's retention: only revoked grants are in it (`revoked_at <= t` implies `IS NOT NULL`).
  await db.schema
    .createIndex('oauth_grants_revoked_at')
    .ifNotExists()
    .on('oauth_grants')
    .column('revoked_at')
    .where('revoked_at', 'is not', null)
    .execute();

  // No index besides the primary key: every statement on tokens is by hash (see prune.ts).
  await db.schema
    .createTable('oauth_tokens')
    .ifNotExists()
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('grant_id', 'text', (col) => col.notNull())
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('user_id', 'text', (col) => col.notNull())
    .addColumn('scopes', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('origin', 'text', (col) => col.notNull())
    .addColumn('rotated_at', 'bigint')
    .execute();
}

/**
 * The old tables still there. On PostgreSQL, all of them: the migrator's lock and transaction run
 * this migration once, after 004.
 */
async function oldTables(db: Db): Promise<Set<OldTable>> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return new Set(OLD_TABLES);
  const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(
    db,
  );
  const present = new Set(rows.map((row) => row.name));
  return new Set(OLD_TABLES.filter((table) => present.has(table)));
}
