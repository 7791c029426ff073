import type { Kysely, Migration, MigrationProvider } from 'kysely';
import { storageByLifetime } from './migration-005/index.js';

/**
 * The schema, as migrations shipped with the package. Never edit a released migration: add the
 * next one. Names sort in the order they run.
 *
 * Every step is idempotent (`IF NOT EXISTS`): PostgreSQL serializes migrators with an advisory
 * lock, but SQLite has no lock between connections and runs DDL outside a transaction, so two
 * processes starting at once may both run a migration; the second then finds everything in place
 * and fails only on recording it, which `migrate()` retries.
 *
 * Columns are typed for both engines: `bigint` is SQLite's INTEGER and PostgreSQL's int8;
 * `text` is the same on both.
 */
export const migrations: Record<string, Migration> = {
  '2026-11-21-001-initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('oauth_clients')
        .ifNotExists()
        .addColumn('client_id', 'text', (col) => col.primaryKey())
        .addColumn('application_name', 'text', (col) => col.notNull())
        .addColumn('redirect_uri', 'text', (col) => col.notNull())
        .addColumn('grant_type', 'text', (col) => col.notNull())
        .addColumn('secret_hash', 'text')
        .addColumn('scopes', 'text', (col) => col.notNull())
        .addColumn('disabled', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (col) => col.notNull())
        .execute();

      await db.schema
        .createTable('oauth_users')
        .ifNotExists()
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('provider', 'text', (col) => col.notNull())
        .addColumn('identifier', 'text', (col) => col.notNull())
        .addColumn('created_at', 'bigint', (col) => col.notNull())
        .addUniqueConstraint('oauth_users_identity', ['provider', 'identifier'])
        .execute();

      await db.schema
        .createTable('oauth_consents')
        .ifNotExists()
        .addColumn('user_id', 'text', (col) => col.notNull())
        .addColumn('client_id', 'text', (col) => col.notNull())
        .addColumn('scopes', 'text', (col) => col.notNull())
        .addColumn('created_at', 'bigint', (col) => col.notNull())
        .addColumn('updated_at', 'bigint', (col) => col.notNull())
        .addPrimaryKeyConstraint('oauth_consents_pk', ['user_id', 'client_id'])
        .execute();

      await db.schema
        .createTable('oauth_codes')
        .ifNotExists()
        .addColumn('code_hash', 'text', (col) => col.primaryKey())
        .addColumn('client_id', 'text', (col) => col.notNull())
        .addColumn('user_id', 'text', (col) => col.notNull())
        .addColumn('redirect_uri', 'text', (col) => col.notNull())
        .addColumn('scopes', 'text', (col) => col.notNull())
        .addColumn('grant_id', 'text', (col) => col.notNull())
        .addColumn('code_challenge', 'text')
        .addColumn('code_challenge_method', 'text')
        .addColumn('created_at', 'bigint', (col) => col.notNull())
        .addColumn('expires_at', 'bigint', (col) => col.notNull())
        .addColumn('used_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('oauth_codes_expires_at')
        .ifNotExists()
        .on('oauth_codes')
        .column('expires_at')
        .execute();

      for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens'] as const) {
        let create = db.schema
          .createTable(table)
          .ifNotExists()
          .addColumn('token_hash', 'text', (col) => col.primaryKey())
          .addColumn('grant_id', 'text', (col) => col.notNull())
          .addColumn('client_id', 'text', (col) => col.notNull())
          .addColumn('user_id', 'text', (col) => col.notNull())
          .addColumn('scopes', 'text', (col) => col.notNull())
          .addColumn('created_at', 'bigint', (col) => col.notNull());
        create =
          table === 'oauth_access_tokens'
            ? create
                .addColumn('origin', 'text', (col) => col.notNull())
                .addColumn('expires_at', 'bigint', (col) => col.notNull())
            : create.addColumn('expires_at', 'bigint').addColumn('rotated_at', 'bigint');
        await create.execute();
        await db.schema.createIndex(`${table}_grant_id`).ifNotExists().on(table).column('grant_id').execute();
        await db.schema
          .createIndex(`${table}_user_client`)
          .ifNotExists()
          .on(table)
          .columns(['user_id', 'client_id'])
          .execute();
        await db.schema
          .createIndex(`${table}_expires_at`)
          .ifNotExists()
          .on(table)
          .column('expires_at')
          .execute();
      }

      await db.schema
        .createTable('oauth_revoked_grants')
        .ifNotExists()
        .addColumn('grant_id', 'text', (col) => col.primaryKey())
        .addColumn('revoked_at', 'bigint', (col) => col.notNull())
        .execute();

      await db.schema
        .createTable('oauth_nonces')
        .ifNotExists()
        .addColumn('scope', 'text', (col) => col.notNull())
        .addColumn('nonce', 'text', (col) => col.notNull())
        .addColumn('expires_at', 'bigint', (col) => col.notNull())
        .addPrimaryKeyConstraint('oauth_nonces_pk', ['scope', 'nonce'])
        .execute();
      await db.schema
        .createIndex('oauth_nonces_expires_at')
        .ifNotExists()
        .on('oauth_nonces')
        .column('expires_at')
        .execute();

      await db.schema
        .createTable('oauth_sessions')
        .ifNotExists()
        .addColumn('sid', 'text', (col) => col.primaryKey())
        .addColumn('data', 'text', (col) => col.notNull())
        .addColumn('expires_at', 'bigint', (col) => col.notNull())
        .execute();
      await db.schema
        .createIndex('oauth_sessions_expires_at')
        .ifNotExists()
        .on('oauth_sessions')
        .column('expires_at')
        .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const table of [
        'oauth_sessions',
        'oauth_nonces',
        'oauth_revoked_grants',
        'oauth_refresh_tokens',
        'oauth_access_tokens',
        'oauth_codes',
        'oauth_consents',
        'oauth_users',
        'oauth_clients',
      ]) {
        await db.schema.dropTable(table).ifExists().execute();
      }
    },
  },
  '2026-11-21-002-client-management': {
    async up(db: Kysely<unknown>) {
      // SQLite cannot add a column IF NOT EXISTS: a racing SQLite process may have added it.
      await addColumnOnce(() =>
        db.schema.alterTable('oauth_clients').addColumn('default_scopes', 'text').execute(),
      );
      await addColumnOnce(() =>
        db.schema
          .alterTable('oauth_clients')
          .addColumn('contacts', 'text', (col) => col.notNull().defaultTo(''))
          .execute(),
      );
      // Listing and removing by client: consents and tokens are otherwise indexed by user first.
      for (const table of ['oauth_consents', 'oauth_codes', 'oauth_access_tokens', 'oauth_refresh_tokens']) {
        await db.schema
          .createIndex(`${table}_client_id`)
          .ifNotExists()
          .on(table)
          .column('client_id')
          .execute();
      }
    },
    async down(db: Kysely<unknown>) {
      for (const table of ['oauth_consents', 'oauth_codes', 'oauth_access_tokens', 'oauth_refresh_tokens']) {
        await db.schema.dropIndex(`${table}_client_id`).ifExists().execute();
      }
      await db.schema.alterTable('oauth_clients').dropColumn('contacts').execute();
      await db.schema.alterTable('oauth_clients').dropColumn('default_scopes').execute();
    },
  },
  '2026-11-21-003-rate-limits-and-pkce': {
    async up(db: Kysely<unknown>) {
      await addColumnOnce(() =>
        db.schema
          .alterTable('oauth_clients')
          .addColumn('require_pkce', 'integer', (col) => col.notNull().defaultTo(0))
          .execute(),
      );
      await db.schema
        .createTable('oauth_rate_limits')
        .ifNotExists()
        .addColumn('key', 'text', (col) => col.primaryKey())
        .addColumn('count', 'integer', (col) => col.notNull())
        .addColumn('reset_at', 'bigint', (col) => col.notNull())
        .execute();
      await db.schema
        .createIndex('oauth_rate_limits_reset_at')
        .ifNotExists()
        .on('oauth_rate_limits')
        .column('reset_at')
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('oauth_rate_limits').ifExists().execute();
      await db.schema.alterTable('oauth_clients').dropColumn('require_pkce').execute();
    },
  },
  '2026-11-21-004-fewer-token-indexes': {
    // Each secondary index makes every token insert dearer (bench/README.md). Tokens are looked
    // up by user and client together or by client alone, never by user alone, so one
    // (client_id, user_id) index serves both; refresh tokens are mostly stored without expiry,
    // so only those with one need to be in the index prune reads (`expires_at <= now` implies
    // `IS NOT NULL`, so the planners use the partial index).
    //
    // Upgrading builds every new index before dropping any old one, so queries stay indexed
    // throughout. What it costs: each build reads its whole table, and on PostgreSQL the
    // migrator runs in one transaction, where CREATE INDEX cannot be CONCURRENTLY, so writes to
    // the token tables (issuing, refreshing, revoking) wait until the migration commits; reads
    // wait only from the DROP INDEX at the end (which locks the table) to the commit, a moment.
    // About 1 s for 300,000 access and 300,000 refresh tokens on a small server. On SQLite
    // each build holds the write lock likewise (readers go on, in WAL mode).
    async up(db: Kysely<unknown>) {
      for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens']) {
        await db.schema
          .createIndex(`${table}_client_user`)
          .ifNotExists()
          .on(table)
          .columns(['client_id', 'user_id'])
          .execute();
      }
      await db.schema
        .createIndex('oauth_refresh_tokens_expires_at_set')
        .ifNotExists()
        .on('oauth_refresh_tokens')
        .column('expires_at')
        .where('expires_at', 'is not', null)
        .execute();
      for (const index of [
        'oauth_access_tokens_user_client',
        'oauth_access_tokens_client_id',
        'oauth_refresh_tokens_user_client',
        'oauth_refresh_tokens_client_id',
        'oauth_refresh_tokens_expires_at',
      ]) {
        await db.schema.dropIndex(index).ifExists().execute();
      }
    },
    async down(db: Kysely<unknown>) {
      await db.schema
        .createIndex('oauth_refresh_tokens_expires_at')
        .ifNotExists()
        .on('oauth_refresh_tokens')
        .column('expires_at')
        .execute();
      await db.schema.dropIndex('oauth_refresh_tokens_expires_at_set').ifExists().execute();
      for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens']) {
        await db.schema
          .createIndex(`${table}_user_client`)
          .ifNotExists()
          .on(table)
          .columns(['user_id', 'client_id'])
          .execute();
        await db.schema
          .createIndex(`${table}_client_id`)
          .ifNotExists()
          .on(table)
          .column('client_id')
          .execute();
        await db.schema.dropIndex(`${table}_client_user`).ifExists().execute();
      }
    },
  },
  '2026-11-25-005-storage-by-lifetime': storageByLifetime,
};

/** Runs an ADD COLUMN, accepting that another SQLite process added the column first. */
async function addColumnOnce(add: () => Promise<void>): Promise<void> {
  try {
    await add();
  } catch (err) {
    if (!/duplicate column name/i.test((err as Error).message)) throw err;
  }
}

/** Kysely's migrator reads the migrations from here: they are code, not files to find at run time. */
export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
