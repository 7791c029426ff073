import {
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  Migrator,
  type QueryResult,
  type Selectable,
  type SqlBool,
  sql,
} from 'kysely';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ClientRecord,
  ConsentRecord,
  PruneOptions,
  PruneResult,
  RateLimitStore,
  RefreshTokenRecord,
  SessionStore,
  Storage,
  UserRecord,
} from '../types.js';
import { migrationProvider, migrations } from './migrations.js';
import type { StatementNames } from './named.js';
import { type DirectRunner, type Executor, prepareQuery as prepared } from './prepared.js';
import type { Database } from './schema.js';

export type SqlDialectName = 'postgres' | 'sqlite';

/** The SQL adapter: every domain of {@link Storage}, the session store, pruning and migrations. */
export interface SqlStorage extends Storage {
  readonly dialect: SqlDialectName;
  sessions: SessionStore;
  rateLimits: RateLimitStore;
  prune(now: number, options?: PruneOptions): Promise<PruneResult>;
  /**
   * Brings the schema up to date; resolves the names of the migrations it ran (none when already
   * current). Safe to run twice and from several instances at once: the migrator holds a lock.
   */
  migrate(): Promise<string[]>;
  /** Closes the database handle (ends the pool, closes the SQLite file). */
  close(): Promise<void>;
}

type Db = Executor;

const DEFAULT_BATCH_SIZE = 1000;
const DEFAULT_REVOKED_GRANT_RETENTION_MS = 86_400_000;

/** How the frequent queries run besides Kysely: named on PostgreSQL, directly on SQLite. */
export interface HotQueryOptions {
  statementNames?: StatementNames;
  runDirectly?: DirectRunner;
}

/**
 * Builds the adapter over a Kysely instance. Use {@link sqlStorage} or `connectStorage(url)`
 * instead, which create the Kysely instance for a `pg` pool or a `better-sqlite3` database.
 *
 * @internal
 */
export function createSqlStorage(
  root: Kysely<Database>,
  dialect: SqlDialectName,
  schema: string | undefined,
  hot: HotQueryOptions = {},
): SqlStorage {
  const db = schema === undefined ? root : root.withSchema(schema);
  const postgres = dialect === 'postgres';
  const q = prepareQueries(db, hot);

  return {
    dialect,
    clients: {
      async find(clientId) {
        const [row] = (await q.findClient(db, { clientId })).rows;
        return row ? toClient(row) : null;
      },
      async create(client) {
        await db
          .insertInto('oauth_clients')
          .values({
            client_id: client.clientId,
            application_name: client.applicationName,
            redirect_uri: client.redirectUri,
            grant_type: client.grantType,
            secret_hash: client.secretHash,
            scopes: scopeText(client.scopes),
            default_scopes: client.defaultScopes == null ? null : scopeText(client.defaultScopes),
            contacts: scopeText(client.contacts ?? []),
            disabled: client.disabled ? 1 : 0,
            require_pkce: client.requirePkce === true ? 1 : 0,
            created_at: client.createdAt,
          })
          .execute();
      },
      async list() {
        const rows = await db
          .selectFrom('oauth_clients')
          .selectAll()
          .orderBy('created_at')
          .orderBy('client_id')
          .execute();
        return rows.map(toClient);
      },
      async update(clientId, changes) {
        const row = await db
          .updateTable('oauth_clients')
          .set({
            ...(changes.applicationName === undefined ? {} : { application_name: changes.applicationName }),
            ...(changes.redirectUri === undefined ? {} : { redirect_uri: changes.redirectUri }),
            ...(changes.secretHash === undefined ? {} : { secret_hash: changes.secretHash }),
            ...(changes.scopes === undefined ? {} : { scopes: scopeText(changes.scopes) }),
            ...(changes.defaultScopes === undefined
              ? {}
              : { default_scopes: changes.defaultScopes === null ? null : scopeText(changes.defaultScopes) }),
            ...(changes.contacts === undefined ? {} : { contacts: scopeText(changes.contacts) }),
            ...(changes.disabled === undefined ? {} : { disabled: changes.disabled ? 1 : 0 }),
            ...(changes.requirePkce === undefined ? {} : { require_pkce: changes.requirePkce ? 1 : 0 }),
          })
          .where('client_id', '=', clientId)
          .returningAll()
          .executeTakeFirst();
        return row ? toClient(row) : null;
      },
      async remove(clientId) {
        return db.transaction().execute(async (trx) => {
          for (const table of [
            'oauth_consents',
            'oauth_codes',
            'oauth_access_tokens',
            'oauth_refresh_tokens',
          ] as const) {
            await trx.deleteFrom(table).where('client_id', '=', clientId).execute();
          }
          const removed = await trx
            .deleteFrom('oauth_clients')
            .where('client_id', '=', clientId)
            .executeTakeFirst();
          return removed.numDeletedRows > 0n;
        });
      },
    },

    users: {
      async findOrCreate(identity, newId, now) {
        // Insert-or-nothing, then read: concurrent first logins of one identity meet at the
        // unique constraint and all read the one row that won.
        const { provider, identifier } = identity;
        await q.insertUser(db, { id: newId, provider, identifier, createdAt: now });
        return toUser(firstRow(await q.findUserByIdentity(db, { provider, identifier })));
      },
      async find(id) {
        const [row] = (await q.findUser(db, { id })).rows;
        return row ? toUser(row) : null;
      },
    },

    consents: {
      async find(userId, clientId) {
        const [row] = (await q.findConsent(db, { userId, clientId })).rows;
        return row ? toConsent(row) : null;
      },
      async grant(userId, clientId, scopes, now) {
        return db.transaction().execute(async (trx) => {
          await trx
            .insertInto('oauth_consents')
            .values({ user_id: userId, client_id: clientId, scopes: '', created_at: now, updated_at: now })
            .onConflict((oc) => oc.columns(['user_id', 'client_id']).doNothing())
            .execute();
          // The row lock (PostgreSQL) makes concurrent grants add their scopes one after the
          // other; SQLite runs one write transaction at a time anyway.
          const current = await trx
            .selectFrom('oauth_consents')
            .select('scopes')
            .where('user_id', '=', userId)
            .where('client_id', '=', clientId)
            .$if(postgres, (qb) => qb.forUpdate())
            .executeTakeFirstOrThrow();
          const row = await trx
            .updateTable('oauth_consents')
            .set({ scopes: scopeText(union(scopesOf(current.scopes), scopes)), updated_at: now })
            .where('user_id', '=', userId)
            .where('client_id', '=', clientId)
            .returningAll()
            .executeTakeFirstOrThrow();
          return toConsent(row);
        });
      },
      async revoke(userId, clientId) {
        const result = await db
          .deleteFrom('oauth_consents')
          .where('user_id', '=', userId)
          .where('client_id', '=', clientId)
          .executeTakeFirst();
        return result.numDeletedRows > 0n;
      },
      async list(filter = {}) {
        const rows = await db
          .selectFrom('oauth_consents as c')
          .selectAll('c')
          .select((eb) => [
            eb
              .selectFrom('oauth_access_tokens as a')
              .select((sub) => sub.fn.max('a.created_at').as('at'))
              .whereRef('a.user_id', '=', 'c.user_id')
              .whereRef('a.client_id', '=', 'c.client_id')
              .as('last_access'),
            eb
              .selectFrom('oauth_refresh_tokens as r')
              .select((sub) => sub.fn.max('r.created_at').as('at'))
              .whereRef('r.user_id', '=', 'c.user_id')
              .whereRef('r.client_id', '=', 'c.client_id')
              .as('last_refresh'),
          ])
          .$if(filter.userId !== undefined, (qb) => qb.where('c.user_id', '=', filter.userId!))
          .$if(filter.clientId !== undefined, (qb) => qb.where('c.client_id', '=', filter.clientId!))
          .orderBy('c.created_at')
          .execute();
        return rows.map((row) => {
          const uses = [row.last_access, row.last_refresh].filter((at) => at !== null).map(Number);
          return { ...toConsent(row), lastUsedAt: uses.length === 0 ? null : Math.max(...uses) };
        });
      },
    },

    codes: {
      async create(code) {
        await q.insertCode(db, { ...code, scopes: scopeText(code.scopes) });
      },
      async consume(codeHash, now) {
        // Single use decided by the database: only one UPDATE can see `used_at IS NULL`.
        const [won] = (await q.consumeCode(db, { codeHash, now })).rows;
        if (won) return { status: 'consumed', code: toCode(won) };
        const [seen] = (await q.findCode(db, { codeHash })).rows;
        return seen ? { status: 'replayed', code: toCode(seen) } : null;
      },
    },

    tokens: {
      async saveAccessToken(token) {
        await q.insertAccessToken(db, { ...token, scopes: scopeText(token.scopes) });
      },
      async findAccessToken(tokenHash) {
        const [row] = (await q.findAccessToken(db, { tokenHash })).rows;
        return row ? toAccessToken(row) : null;
      },
      async saveRefreshToken(token) {
        await q.insertRefreshToken(db, { ...token, scopes: scopeText(token.scopes) });
      },
      async findRefreshToken(tokenHash) {
        const [row] = (await q.findRefreshToken(db, { tokenHash })).rows;
        return row ? toRefreshToken(row) : null;
      },
      async rotateRefreshToken(oldHash, next, now) {
        return db.transaction().execute(async (trx) => {
          const seen = (await q.findLiveRefreshTokenHash(trx, { tokenHash: oldHash })).rows;
          if (seen.length === 0) return 'missing';
          // The conditional update decides: only one caller can see `rotated_at IS NULL`.
          const won = await q.rotateRefreshToken(trx, { tokenHash: oldHash, now });
          if (won.numAffectedRows === 0n) return 'reused';
          await q.insertRefreshToken(trx, { ...next, scopes: scopeText(next.scopes) });
          return 'rotated';
        });
      },
      async revokeGrant(grantId, now) {
        return db.transaction().execute(async (trx) => {
          // The marker first: a token saved under this grant from now on is never found.
          await trx
            .insertInto('oauth_revoked_grants')
            .values({ grant_id: grantId, revoked_at: now })
            .onConflict((oc) => oc.column('grant_id').doNothing())
            .execute();
          const access = await trx
            .deleteFrom('oauth_access_tokens')
            .where('grant_id', '=', grantId)
            .executeTakeFirst();
          const refresh = await trx
            .deleteFrom('oauth_refresh_tokens')
            .where('grant_id', '=', grantId)
            .executeTakeFirst();
          return Number(access.numDeletedRows + refresh.numDeletedRows);
        });
      },
      async revokeForUserAndClient(userId, clientId) {
        return db.transaction().execute(async (trx) => {
          let count = 0n;
          for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens'] as const) {
            const result = await trx
              .deleteFrom(table)
              .where('user_id', '=', userId)
              .where('client_id', '=', clientId)
              .executeTakeFirst();
            count += result.numDeletedRows;
          }
          return Number(count);
        });
      },
    },

    nonces: {
      async use(scope, nonce, expiresAt) {
        return (await q.useNonce(db, { scope, nonce, expiresAt })).rows.length > 0;
      },
    },

    rateLimits: {
      async increment(key, windowMs, now) {
        const row = firstRow(await q.incrementRateLimit(db, { key, now, resetAt: now + windowMs }));
        return { count: Number(row.count), resetAt: millis(row.reset_at) };
      },
      async get(key, now) {
        const [row] = (await q.findRateLimit(db, { key, now })).rows;
        return row ? { count: Number(row.count), resetAt: millis(row.reset_at) } : null;
      },
      async reset(key) {
        await q.deleteRateLimit(db, { key });
      },
    },

    sessions: {
      async get(sid, now) {
        const [row] = (await q.findSession(db, { sid, now })).rows;
        return row?.data ?? null;
      },
      async set(sid, json, expiresAt) {
        await q.saveSession(db, { sid, data: json, expiresAt });
      },
      async touch(sid, expiresAt) {
        await q.touchSession(db, { sid, expiresAt });
      },
      async destroy(sid) {
        await q.deleteSession(db, { sid });
      },
    },

    async prune(now, options = {}) {
      const batch = options.batchSize ?? DEFAULT_BATCH_SIZE;
      if (!Number.isInteger(batch) || batch < 1) throw new TypeError('batchSize must be a positive integer');
      const retention = options.revokedGrantRetentionMs ?? DEFAULT_REVOKED_GRANT_RETENTION_MS;
      const prune = (table: PrunableTable, expired: Condition) =>
        deleteInBatches(db, postgres, table, expired, batch);
      const ofRevokedGrant: Condition = (eb) =>
        eb('grant_id', 'in', eb.selectFrom('oauth_revoked_grants').select('grant_id'));

      return {
        codes: await prune('oauth_codes', (eb) => eb('expires_at', '<=', now)),
        accessTokens:
          (await prune('oauth_access_tokens', (eb) => eb('expires_at', '<=', now))) +
          (await prune('oauth_access_tokens', ofRevokedGrant)),
        refreshTokens:
          (await prune('oauth_refresh_tokens', (eb) => eb('expires_at', '<=', now))) +
          (await prune('oauth_refresh_tokens', ofRevokedGrant)),
        nonces: await prune('oauth_nonces', (eb) => eb('expires_at', '<=', now)),
        sessions: await prune('oauth_sessions', (eb) => eb('expires_at', '<=', now)),
        revokedGrants: await prune('oauth_revoked_grants', (eb) => eb('revoked_at', '<=', now - retention)),
        rateLimits: await prune('oauth_rate_limits', (eb) => eb('reset_at', '<=', now)),
      };
    },

    async migrate() {
      if (schema !== undefined) await createSchema(root, schema);
      const migrator = new Migrator({
        db,
        provider: migrationProvider,
        migrationTableName: 'oauth_migrations',
        migrationLockTableName: 'oauth_migrations_lock',
        ...(schema === undefined ? {} : { migrationTableSchema: schema }),
      });
      let { error, results = [] } = await migrator.migrateToLatest();
      const applied = results.filter((result) => result.status === 'Success');
      // Two SQLite processes migrating at once both run an (idempotent) migration; the slower
      // one fails on recording it and retries from the next one (see migrations.ts). Each
      // retry makes progress, so there are at most as many as migrations.
      for (
        let retry = 0;
        error !== undefined && !postgres && retry < Object.keys(migrations).length;
        retry++
      ) {
        ({ error, results = [] } = await migrator.migrateToLatest());
        applied.push(...results.filter((result) => result.status === 'Success'));
      }
      if (error !== undefined) {
        const failed = results.find((result) => result.status === 'Error');
        throw new Error(
          `openid-oauth-bridge: migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`,
          { cause: error },
        );
      }
      return applied.map((result) => result.migrationName);
    },

    async close() {
      await root.destroy();
    },
  };
}

// --- Pruning ----------------------------------------------------------------------------------

type PrunableTable =
  | 'oauth_codes'
  | 'oauth_access_tokens'
  | 'oauth_refresh_tokens'
  | 'oauth_nonces'
  | 'oauth_sessions'
  | 'oauth_revoked_grants'
  | 'oauth_rate_limits';

/** Which rows of a prunable table are no longer needed. */
type Condition = (eb: ExpressionBuilder<Database, PrunableTable>) => Expression<SqlBool>;

/** The key of each prunable table, by which a batch is chosen and then deleted. */
const KEY: Record<PrunableTable, string> = {
  oauth_codes: 'code_hash',
  oauth_access_tokens: 'token_hash',
  oauth_refresh_tokens: 'token_hash',
  // Composite key; SQLite's rowid and PostgreSQL's ctid stand in below.
  oauth_nonces: '',
  oauth_sessions: 'sid',
  oauth_revoked_grants: 'grant_id',
  oauth_rate_limits: 'key',
};

/**
 * Deletes matching rows a batch at a time, so no statement holds locks on a large part of a table.
 * On PostgreSQL, `FOR UPDATE SKIP LOCKED` lets instances pruning at once take different rows
 * instead of waiting on each other; SQLite runs one writer at a time anyway.
 */
async function deleteInBatches(
  db: Db,
  postgres: boolean,
  table: PrunableTable,
  expired: Condition,
  batch: number,
): Promise<number> {
  const key = KEY[table] || (postgres ? 'ctid' : 'rowid');
  let total = 0;
  for (;;) {
    // Dynamic table and key names: the key is a fixed column or the engine's row id, never input.
    const chosen = db
      .selectFrom(table as 'oauth_codes')
      .select(sql.ref(key).as('key'))
      .where(expired as never)
      .limit(batch)
      .$if(postgres, (qb) => qb.forUpdate().skipLocked());
    const result = await db
      .deleteFrom(table as 'oauth_codes')
      .where(sql.ref(key), 'in', chosen)
      .executeTakeFirst();
    const deleted = Number(result.numDeletedRows);
    total += deleted;
    if (deleted < batch) return total;
  }
}

// --- Helpers ----------------------------------------------------------------------------------

/**
 * Whether a token row (aliased `t`) may be found: its grant is not revoked (including tokens
 * saved after the revocation) and its client is not disabled. Both are primary-key probes in the
 * same statement as the lookup: no extra round trip.
 */
function tokenIsLive<T extends { grant_id: string; client_id: string }>(
  eb: ExpressionBuilder<Database & { t: T }, 't'>,
): Expression<SqlBool> {
  return eb.not(
    eb.or([
      eb.exists(
        eb
          .selectFrom('oauth_revoked_grants as r')
          .select('r.grant_id')
          .whereRef('r.grant_id', '=', eb.ref('t.grant_id')),
      ),
      eb.exists(
        eb
          .selectFrom('oauth_clients as c')
          .select('c.client_id')
          .whereRef('c.client_id', '=', eb.ref('t.client_id'))
          .where('c.disabled', '<>', 0),
      ),
    ]),
  );
}

/**
 * The queries of the frequent operations, built and compiled once (see prepared.ts): token and
 * code lookups and inserts, client, user and consent lookups, sessions, nonces and rate limits.
 * Scopes are passed as stored (space-delimited text).
 */
function prepareQueries(db: Kysely<Database>, { statementNames: names, runDirectly }: HotQueryOptions) {
  type Stored<T extends { scopes: readonly string[] }> = Omit<T, 'scopes'> & { scopes: string };
  const onCompiled = names && ((sql: string) => names.add(sql));
  const prepareQuery: typeof prepared = (build) => prepared(build, { onCompiled, runDirectly });
  return {
    findClient: prepareQuery((p: { clientId: string }) =>
      db.selectFrom('oauth_clients').select(COLUMNS.oauth_clients).where('client_id', '=', p.clientId),
    ),

    insertUser: prepareQuery((p: { id: string; provider: string; identifier: string; createdAt: number }) =>
      db
        .insertInto('oauth_users')
        .values({ id: p.id, provider: p.provider, identifier: p.identifier, created_at: p.createdAt })
        .onConflict((oc) => oc.columns(['provider', 'identifier']).doNothing()),
    ),
    findUserByIdentity: prepareQuery((p: { provider: string; identifier: string }) =>
      db
        .selectFrom('oauth_users')
        .select(COLUMNS.oauth_users)
        .where('provider', '=', p.provider)
        .where('identifier', '=', p.identifier),
    ),
    findUser: prepareQuery((p: { id: string }) =>
      db.selectFrom('oauth_users').select(COLUMNS.oauth_users).where('id', '=', p.id),
    ),

    findConsent: prepareQuery((p: { userId: string; clientId: string }) =>
      db
        .selectFrom('oauth_consents')
        .select(COLUMNS.oauth_consents)
        .where('user_id', '=', p.userId)
        .where('client_id', '=', p.clientId),
    ),

    insertCode: prepareQuery((p: Stored<AuthorizationCodeRecord>) =>
      db.insertInto('oauth_codes').values({
        code_hash: p.codeHash,
        client_id: p.clientId,
        user_id: p.userId,
        redirect_uri: p.redirectUri,
        scopes: p.scopes,
        grant_id: p.grantId,
        code_challenge: p.codeChallenge,
        code_challenge_method: p.codeChallengeMethod,
        created_at: p.createdAt,
        expires_at: p.expiresAt,
        used_at: null,
      }),
    ),
    consumeCode: prepareQuery((p: { codeHash: string; now: number }) =>
      db
        .updateTable('oauth_codes')
        .set({ used_at: p.now })
        .where('code_hash', '=', p.codeHash)
        .where('used_at', 'is', null)
        .returning(COLUMNS.oauth_codes),
    ),
    findCode: prepareQuery((p: { codeHash: string }) =>
      db.selectFrom('oauth_codes').select(COLUMNS.oauth_codes).where('code_hash', '=', p.codeHash),
    ),

    insertAccessToken: prepareQuery((p: Stored<AccessTokenRecord>) =>
      db.insertInto('oauth_access_tokens').values({
        token_hash: p.tokenHash,
        grant_id: p.grantId,
        client_id: p.clientId,
        user_id: p.userId,
        scopes: p.scopes,
        origin: p.origin,
        created_at: p.createdAt,
        expires_at: p.expiresAt,
      }),
    ),
    findAccessToken: prepareQuery((p: { tokenHash: string }) =>
      db
        .selectFrom('oauth_access_tokens as t')
        .select(COLUMNS.oauth_access_tokens)
        .where('t.token_hash', '=', p.tokenHash)
        .where(tokenIsLive),
    ),
    insertRefreshToken: prepareQuery((p: Stored<RefreshTokenRecord>) =>
      db.insertInto('oauth_refresh_tokens').values({
        token_hash: p.tokenHash,
        grant_id: p.grantId,
        client_id: p.clientId,
        user_id: p.userId,
        scopes: p.scopes,
        created_at: p.createdAt,
        expires_at: p.expiresAt,
        rotated_at: p.rotatedAt,
      }),
    ),
    findRefreshToken: prepareQuery((p: { tokenHash: string }) =>
      db
        .selectFrom('oauth_refresh_tokens as t')
        .select(COLUMNS.oauth_refresh_tokens)
        .where('t.token_hash', '=', p.tokenHash)
        .where(tokenIsLive),
    ),
    findLiveRefreshTokenHash: prepareQuery((p: { tokenHash: string }) =>
      db
        .selectFrom('oauth_refresh_tokens as t')
        .select('t.rotated_at')
        .where('t.token_hash', '=', p.tokenHash)
        .where(tokenIsLive),
    ),
    rotateRefreshToken: prepareQuery((p: { tokenHash: string; now: number }) =>
      db
        .updateTable('oauth_refresh_tokens')
        .set({ rotated_at: p.now })
        .where('token_hash', '=', p.tokenHash)
        .where('rotated_at', 'is', null),
    ),

    useNonce: prepareQuery((p: { scope: string; nonce: string; expiresAt: number }) =>
      db
        .insertInto('oauth_nonces')
        .values({ scope: p.scope, nonce: p.nonce, expires_at: p.expiresAt })
        .onConflict((oc) => oc.columns(['scope', 'nonce']).doNothing())
        .returning('nonce'),
    ),

    // One upsert: racing callers each see a distinct count, and an ended window restarts.
    incrementRateLimit: prepareQuery((p: { key: string; now: number; resetAt: number }) => {
      const fresh = sql<boolean>`${sql.ref('oauth_rate_limits.reset_at')} <= ${p.now}`;
      return db
        .insertInto('oauth_rate_limits')
        .values({ key: p.key, count: 1, reset_at: p.resetAt })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet((eb) => ({
            count: eb
              .case()
              .when(fresh)
              .then(1)
              .else(eb('oauth_rate_limits.count', '+', 1))
              .end(),
            reset_at: eb.case().when(fresh).then(p.resetAt).else(eb.ref('oauth_rate_limits.reset_at')).end(),
          })),
        )
        .returning(['count', 'reset_at']);
    }),
    findRateLimit: prepareQuery((p: { key: string; now: number }) =>
      db
        .selectFrom('oauth_rate_limits')
        .select(['count', 'reset_at'])
        .where('key', '=', p.key)
        .where('reset_at', '>', p.now),
    ),
    deleteRateLimit: prepareQuery((p: { key: string }) =>
      db.deleteFrom('oauth_rate_limits').where('key', '=', p.key),
    ),

    findSession: prepareQuery((p: { sid: string; now: number }) =>
      db.selectFrom('oauth_sessions').select('data').where('sid', '=', p.sid).where('expires_at', '>', p.now),
    ),
    saveSession: prepareQuery((p: { sid: string; data: string; expiresAt: number }) =>
      db
        .insertInto('oauth_sessions')
        .values({ sid: p.sid, data: p.data, expires_at: p.expiresAt })
        .onConflict((oc) => oc.column('sid').doUpdateSet({ data: p.data, expires_at: p.expiresAt })),
    ),
    touchSession: prepareQuery((p: { sid: string; expiresAt: number }) =>
      db.updateTable('oauth_sessions').set({ expires_at: p.expiresAt }).where('sid', '=', p.sid),
    ),
    deleteSession: prepareQuery((p: { sid: string }) =>
      db.deleteFrom('oauth_sessions').where('sid', '=', p.sid),
    ),
  };
}

/**
 * The columns the prepared queries read, listed rather than `*`: a column added by a later
 * migration changes no prepared statement's result (PostgreSQL refuses to run a named statement
 * whose result columns changed). The row mappers' types check that no column is missing.
 */
const COLUMNS = {
  oauth_clients: [
    'client_id',
    'application_name',
    'redirect_uri',
    'grant_type',
    'secret_hash',
    'scopes',
    'default_scopes',
    'contacts',
    'disabled',
    'require_pkce',
    'created_at',
  ],
  oauth_users: ['id', 'provider', 'identifier', 'created_at'],
  oauth_consents: ['user_id', 'client_id', 'scopes', 'created_at', 'updated_at'],
  oauth_codes: [
    'code_hash',
    'client_id',
    'user_id',
    'redirect_uri',
    'scopes',
    'grant_id',
    'code_challenge',
    'code_challenge_method',
    'created_at',
    'expires_at',
    'used_at',
  ],
  oauth_access_tokens: [
    't.token_hash',
    't.grant_id',
    't.client_id',
    't.user_id',
    't.scopes',
    't.origin',
    't.created_at',
    't.expires_at',
  ],
  oauth_refresh_tokens: [
    't.token_hash',
    't.grant_id',
    't.client_id',
    't.user_id',
    't.scopes',
    't.created_at',
    't.expires_at',
    't.rotated_at',
  ],
} as const;

/** The first row of a query that always returns one (`executeTakeFirstOrThrow`). */
function firstRow<O>(result: QueryResult<O>): O {
  const [row] = result.rows;
  if (row === undefined) throw new Error('no result');
  return row;
}

/** `CREATE SCHEMA IF NOT EXISTS` can still fail when two instances run it at once: check again. */
async function createSchema(db: Kysely<Database>, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  } catch (err) {
    const exists = await sql<{ found: number }>`
      select 1 as found from information_schema.schemata where schema_name = ${schema}`.execute(db);
    if (exists.rows.length === 0) throw err;
  }
}

const scopeText = (scopes: readonly string[]) => scopes.join(' ');
const scopesOf = (text: string) => (text === '' ? [] : text.split(' '));
const union = (a: readonly string[], b: readonly string[]) => [...new Set([...a, ...b])];
const millis = (value: number | string) => Number(value);
const millisOrNull = (value: number | string | null) => (value === null ? null : Number(value));

function toClient(row: Selectable<Database['oauth_clients']>): ClientRecord {
  return {
    clientId: row.client_id,
    applicationName: row.application_name,
    redirectUri: row.redirect_uri,
    grantType: row.grant_type as ClientRecord['grantType'],
    secretHash: row.secret_hash,
    scopes: scopesOf(row.scopes),
    defaultScopes: row.default_scopes === null ? null : scopesOf(row.default_scopes),
    contacts: scopesOf(row.contacts),
    disabled: row.disabled !== 0,
    ...(row.require_pkce !== 0 ? { requirePkce: true } : {}),
    createdAt: millis(row.created_at),
  };
}

function toUser(row: Selectable<Database['oauth_users']>): UserRecord {
  return {
    id: row.id,
    identifier: row.identifier,
    provider: row.provider,
    createdAt: millis(row.created_at),
  };
}

function toConsent(row: Selectable<Database['oauth_consents']>): ConsentRecord {
  return {
    userId: row.user_id,
    clientId: row.client_id,
    scopes: scopesOf(row.scopes),
    createdAt: millis(row.created_at),
    updatedAt: millis(row.updated_at),
  };
}

function toCode(row: Selectable<Database['oauth_codes']>): AuthorizationCodeRecord {
  return {
    codeHash: row.code_hash,
    clientId: row.client_id,
    userId: row.user_id,
    redirectUri: row.redirect_uri,
    scopes: scopesOf(row.scopes),
    grantId: row.grant_id,
    codeChallenge: row.code_challenge,
    codeChallengeMethod: row.code_challenge_method as AuthorizationCodeRecord['codeChallengeMethod'],
    createdAt: millis(row.created_at),
    expiresAt: millis(row.expires_at),
  };
}

function toAccessToken(row: Selectable<Database['oauth_access_tokens']>): AccessTokenRecord {
  return {
    tokenHash: row.token_hash,
    grantId: row.grant_id,
    clientId: row.client_id,
    userId: row.user_id,
    scopes: scopesOf(row.scopes),
    origin: row.origin as AccessTokenRecord['origin'],
    createdAt: millis(row.created_at),
    expiresAt: millis(row.expires_at),
  };
}

function toRefreshToken(row: Selectable<Database['oauth_refresh_tokens']>): RefreshTokenRecord {
  return {
    tokenHash: row.token_hash,
    grantId: row.grant_id,
    clientId: row.client_id,
    userId: row.user_id,
    scopes: scopesOf(row.scopes),
    createdAt: millis(row.created_at),
    expiresAt: millisOrNull(row.expires_at),
    rotatedAt: millisOrNull(row.rotated_at),
  };
}
