import type { Kysely, Migration, MigrationProvider } from 'kysely';

/**
 * The schema, as migrations shipped with the package. Never edit a released migration: add the
 * next one, numbered after the last (`002-…`). Names sort in the order they run. Until 0.1.0 is
 * released there is one, `001-initial`, the whole schema.
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
  '001-initial': {
    async up(db: Kysely<unknown>) {
      await createEphemeral(db);
      await createClients(db);
      await createUsers(db);
      await createUserClaims(db);
      await createGrants(db);
      await createTokens(db);
      await createSigningKeys(db);
      await createUsage(db);
    },
    async down(db: Kysely<unknown>) {
      for (const table of [
        'oauth_usage_last',
        'oauth_usage',
        'oauth_signing_keys',
        'oauth_tokens',
        'oauth_grants',
        'oauth_user_claims',
        'oauth_users',
        'oauth_clients',
        'oauth_ephemeral',
      ]) {
        await db.schema.dropTable(table).ifExists().execute();
      }
    },
  },
};

/** The keys that sign ID tokens (OpenID Connect), private parts sealed: a handful of rows. */
async function createSigningKeys(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_signing_keys')
    .ifNotExists()
    .addColumn('kid', 'text', (col) => col.primaryKey())
    .addColumn('alg', 'text', (col) => col.notNull())
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('public_jwk', 'text', (col) => col.notNull())
    .addColumn('sealed_private_jwk', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('activated_at', 'bigint')
    .addColumn('retired_at', 'bigint')
    .execute();
}

/** The ephemeral store: codes, sessions, nonces, counters and markers, with expiry. */
async function createEphemeral(db: Kysely<unknown>): Promise<void> {
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
}

async function createClients(db: Kysely<unknown>): Promise<void> {
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
    .addColumn('default_scopes', 'text')
    .addColumn('contacts', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('post_logout_redirect_uris', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('require_pkce', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('allowed_teams', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('resources', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('registered_via', 'text', (col) => col.notNull().defaultTo('operator'))
    .addColumn('unused_expires_at', 'bigint')
    .addColumn('owner_id', 'text')
    .addColumn('verified', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('awaiting_approval', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('description', 'text')
    .addColumn('homepage_uri', 'text')
    .addColumn('previous_secret_hash', 'text')
    .addColumn('previous_secret_expires_at', 'bigint')
    .execute();
  // The developer page lists a member's clients; the operator's have no owner.
  await db.schema
    .createIndex('oauth_clients_owner_id')
    .ifNotExists()
    .on('oauth_clients')
    .column('owner_id')
    .where('owner_id', 'is not', null)
    .execute();
  // Prune finds the self-registered clients not used yet by it; every other client has none, so
  // the index is partial (`unused_expires_at <= t` implies `IS NOT NULL`).
  await db.schema
    .createIndex('oauth_clients_unused_expires_at')
    .ifNotExists()
    .on('oauth_clients')
    .column('unused_expires_at')
    .where('unused_expires_at', 'is not', null)
    .execute();
}

/** The claims of each subject's latest login (`users.saveClaims`): what ID tokens and teams read. */
async function createUserClaims(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_user_claims')
    .ifNotExists()
    .addColumn('subject', 'text', (col) => col.primaryKey())
    .addColumn('claims', 'text', (col) => col.notNull())
    .execute();
}

async function createUsers(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_users')
    .ifNotExists()
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('provider', 'text', (col) => col.notNull())
    .addColumn('identifier', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addUniqueConstraint('oauth_users_identity', ['provider', 'identifier'])
    .execute();
}

/** One grant per user and client: the primary key; `grant_id` names it in tokens and codes. */
async function createGrants(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_grants')
    .ifNotExists()
    .addColumn('grant_id', 'text', (col) => col.notNull())
    .addColumn('user_id', 'text', (col) => col.notNull())
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('scopes', 'text', (col) => col.notNull())
    .addColumn('resources', 'text', (col) => col.notNull().defaultTo(''))
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
  // Prune's retention: only revoked grants are in it (`revoked_at <= t` implies `IS NOT NULL`,
  // so the planners use the partial index).
  await db.schema
    .createIndex('oauth_grants_revoked_at')
    .ifNotExists()
    .on('oauth_grants')
    .column('revoked_at')
    .where('revoked_at', 'is not', null)
    .execute();
}

/**
 * Access and refresh tokens, by hash. No index besides the primary key: every statement on
 * tokens is by hash (see prune.ts), and each secondary index would make every token insert dearer.
 */
async function createTokens(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_tokens')
    .ifNotExists()
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('grant_id', 'text', (col) => col.notNull())
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('user_id', 'text', (col) => col.notNull())
    .addColumn('scopes', 'text', (col) => col.notNull())
    .addColumn('resources', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('origin', 'text', (col) => col.notNull())
    .addColumn('rotated_at', 'bigint')
    .execute();
}

/**
 * Per-app usage, written in batches by the recorder (never on a request): day counts keyed by
 * client, day and kind, which an upsert adds to; and the last use of each client (`user_id` `''`)
 * and of each account with it. Prune deletes by `day` and by `last_used_at`; the applications page
 * reads a member's rows by `user_id`.
 */
async function createUsage(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_usage')
    .ifNotExists()
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('day', 'text', (col) => col.notNull())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('count', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('oauth_usage_pk', ['client_id', 'day', 'kind'])
    .execute();
  await db.schema.createIndex('oauth_usage_day').ifNotExists().on('oauth_usage').column('day').execute();
  await db.schema
    .createTable('oauth_usage_last')
    .ifNotExists()
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('user_id', 'text', (col) => col.notNull())
    .addColumn('last_used_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('oauth_usage_last_pk', ['client_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('oauth_usage_last_user_id')
    .ifNotExists()
    .on('oauth_usage_last')
    .column('user_id')
    .execute();
  await db.schema
    .createIndex('oauth_usage_last_last_used_at')
    .ifNotExists()
    .on('oauth_usage_last')
    .column('last_used_at')
    .execute();
}

/** Kysely's migrator reads the migrations from here: they are code, not files to find at run time. */
export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
