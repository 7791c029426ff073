import { randomBytes } from 'node:crypto';
import {
  type ExpressionBuilder,
  type Insertable,
  type Kysely,
  type Migration,
  sql,
  SqliteAdapter,
} from 'kysely';
import { ephemeralKeys, type StoredCode, type UsedCode } from '../keys.js';
import type { Database, Millis, NullableMillis } from './schema.js';

/** The tables migration 005 moves out of, as migrations 001 to 004 left them. */
interface Before {
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

type Db = Kysely<Before & Database>;

/**
 * In the order they are dropped: the revoked grants last, since moving tokens and codes reads
 * them, so that a table still there never lacks one it is moved with.
 */
const OLD_TABLES = [
  'oauth_consents',
  'oauth_access_tokens',
  'oauth_refresh_tokens',
  'oauth_codes',
  'oauth_sessions',
  'oauth_nonces',
  'oauth_rate_limits',
  'oauth_revoked_grants',
] as const;
type OldTable = (typeof OLD_TABLES)[number];

/** Rows read and written per statement while moving. */
const PAGE = 500;

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
 * - unexpired codes move to the ephemeral store under {@link ephemeralKeys.code} (unused) or
 *   {@link ephemeralKeys.usedCode} (used, so a replay still revokes the grant), re-pointed too;
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

const newGrantId = () => randomBytes(16).toString('base64url');

async function grantsFromConsents(db: Db): Promise<void> {
  await eachPage(
    (after: { user_id: string; client_id: string } | undefined) =>
      db
        .selectFrom('oauth_consents')
        .selectAll()
        .$if(after !== undefined, (qb) =>
          qb.where((eb) =>
            eb(eb.refTuple('user_id', 'client_id'), '>', eb.tuple(after!.user_id, after!.client_id)),
          ),
        )
        .orderBy('user_id')
        .orderBy('client_id')
        .limit(PAGE)
        .execute(),
    (consents) =>
      insertGrants(
        db,
        consents.map((consent) => ({
          grant_id: newGrantId(),
          user_id: consent.user_id,
          client_id: consent.client_id,
          scopes: consent.scopes,
          created_at: Number(consent.created_at),
          updated_at: Number(consent.updated_at),
          revoked_at: null,
        })),
      ),
  );
}

/** The columns by which an old token or code (aliased `o`) names its user, client and grant. */
interface OldRow {
  grant_id: string;
  user_id: string;
  client_id: string;
}
type OldRowBuilder<T extends OldRow> = ExpressionBuilder<Before & Database & { o: T }, 'o'>;

/** The old row's grant was not revoked: it still worked. */
function stillWorked<T extends OldRow>(eb: OldRowBuilder<T>) {
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
function stillWorkedWithoutGrant<T extends OldRow>(eb: OldRowBuilder<T>) {
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

/**
 * A grant for each user and client that had a live token or an unused code but no consent, with
 * the union of their scopes, created when the first of them was and updated when the last was.
 */
async function grantsForPairsWithoutConsent(db: Db, now: number, old: Set<OldTable>): Promise<void> {
  const columns = ['o.user_id', 'o.client_id', 'o.scopes', 'o.created_at'] as const;
  const uses = [
    ...(old.has('oauth_access_tokens')
      ? await db
          .selectFrom('oauth_access_tokens as o')
          .select(columns)
          .where('o.expires_at', '>', now)
          .where(stillWorkedWithoutGrant)
          .execute()
      : []),
    ...(old.has('oauth_refresh_tokens')
      ? await db
          .selectFrom('oauth_refresh_tokens as o')
          .select(columns)
          .where((eb) => eb.or([eb('o.expires_at', 'is', null), eb('o.expires_at', '>', now)]))
          .where(stillWorkedWithoutGrant)
          .execute()
      : []),
    ...(old.has('oauth_codes')
      ? await db
          .selectFrom('oauth_codes as o')
          .select(columns)
          .where('o.expires_at', '>', now)
          .where('o.used_at', 'is', null)
          .where(stillWorkedWithoutGrant)
          .execute()
      : []),
  ];
  const grants = new Map<string, Insertable<Database['oauth_grants']> & { scopeSet: Set<string> }>();
  for (const use of uses) {
    const pair = JSON.stringify([use.user_id, use.client_id]);
    const at = Number(use.created_at);
    const grant = grants.get(pair) ?? {
      grant_id: newGrantId(),
      user_id: use.user_id,
      client_id: use.client_id,
      scopes: '',
      created_at: at,
      updated_at: at,
      revoked_at: null,
      scopeSet: new Set<string>(),
    };
    for (const scope of scopesOf(use.scopes)) grant.scopeSet.add(scope);
    grant.created_at = Math.min(grant.created_at, at);
    grant.updated_at = Math.max(grant.updated_at, at);
    grants.set(pair, grant);
  }
  const rows = [...grants.values()].map(({ scopeSet, ...grant }) => ({
    ...grant,
    scopes: [...scopeSet].join(' '),
  }));
  for (let i = 0; i < rows.length; i += PAGE) await insertGrants(db, rows.slice(i, i + PAGE));
}

async function insertGrants(db: Db, rows: Insertable<Database['oauth_grants']>[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('oauth_grants')
    .values(rows)
    .onConflict((oc) => oc.columns(['user_id', 'client_id']).doNothing())
    .execute();
}

/** The columns of `oauth_tokens`, in the order the token moves select them. */
const TOKEN_COLUMNS = [
  'token_hash',
  'type',
  'grant_id',
  'client_id',
  'user_id',
  'scopes',
  'created_at',
  'expires_at',
  'origin',
  'rotated_at',
] as const;

/**
 * Live access tokens of grants not revoked, into `oauth_tokens` in one statement, each re-pointed
 * to the grant of its user and client (which every one of them now has).
 */
async function moveAccessTokens(db: Db, now: number): Promise<void> {
  await db
    .insertInto('oauth_tokens')
    .columns(TOKEN_COLUMNS)
    .expression(
      db
        .selectFrom('oauth_access_tokens as o')
        .innerJoin('oauth_grants as g', (join) =>
          join.onRef('g.user_id', '=', 'o.user_id').onRef('g.client_id', '=', 'o.client_id'),
        )
        .select([
          'o.token_hash',
          sql<string>`'access_token'`.as('type'),
          'g.grant_id',
          'o.client_id',
          'o.user_id',
          'o.scopes',
          'o.created_at',
          'o.expires_at',
          'o.origin',
          sql<null>`cast(null as bigint)`.as('rotated_at'),
        ])
        .where('o.expires_at', '>', now)
        .where(stillWorked),
    )
    .onConflict((oc) => oc.column('token_hash').doNothing())
    .execute();
}

/** Live refresh tokens of grants not revoked, likewise, with their `rotated_at`. */
async function moveRefreshTokens(db: Db, now: number): Promise<void> {
  await db
    .insertInto('oauth_tokens')
    .columns(TOKEN_COLUMNS)
    .expression(
      db
        .selectFrom('oauth_refresh_tokens as o')
        .innerJoin('oauth_grants as g', (join) =>
          join.onRef('g.user_id', '=', 'o.user_id').onRef('g.client_id', '=', 'o.client_id'),
        )
        .select([
          'o.token_hash',
          sql<string>`'refresh_token'`.as('type'),
          'g.grant_id',
          'o.client_id',
          'o.user_id',
          'o.scopes',
          'o.created_at',
          'o.expires_at',
          sql<string>`'authorization_code'`.as('origin'),
          'o.rotated_at',
        ])
        .where((eb) => eb.or([eb('o.expires_at', 'is', null), eb('o.expires_at', '>', now)]))
        .where(stillWorked),
    )
    .onConflict((oc) => oc.column('token_hash').doNothing())
    .execute();
}

/** Unexpired codes of grants not revoked, as the JSON the library keeps in the ephemeral store. */
async function moveCodes(db: Db, now: number): Promise<void> {
  await eachPage(
    (after: { code_hash: string } | undefined) =>
      db
        .selectFrom('oauth_codes as o')
        .innerJoin('oauth_grants as g', (join) =>
          join.onRef('g.user_id', '=', 'o.user_id').onRef('g.client_id', '=', 'o.client_id'),
        )
        .selectAll('o')
        .select('g.grant_id as new_grant_id')
        .where('o.expires_at', '>', now)
        .where(stillWorked)
        .$if(after !== undefined, (qb) => qb.where('o.code_hash', '>', after!.code_hash))
        .orderBy('o.code_hash')
        .limit(PAGE)
        .execute(),
    (codes) =>
      insertEphemeral(
        db,
        codes.map((code) => {
          const expiresAt = Number(code.expires_at);
          if (code.used_at !== null) {
            const used: UsedCode = {
              grantId: code.new_grant_id,
              clientId: code.client_id,
              userId: code.user_id,
            };
            return {
              key: ephemeralKeys.usedCode(code.code_hash),
              value: JSON.stringify(used),
              expires_at: expiresAt,
            };
          }
          const stored: StoredCode = {
            clientId: code.client_id,
            userId: code.user_id,
            redirectUri: code.redirect_uri,
            scopes: scopesOf(code.scopes),
            grantId: code.new_grant_id,
            codeChallenge: code.code_challenge,
            codeChallengeMethod: code.code_challenge_method === 'S256' ? 'S256' : null,
            createdAt: Number(code.created_at),
            expiresAt,
          };
          return {
            key: ephemeralKeys.code(code.code_hash),
            value: JSON.stringify(stored),
            expires_at: expiresAt,
          };
        }),
      ),
  );
}

async function moveSessions(db: Db, now: number): Promise<void> {
  await eachPage(
    (after: { sid: string } | undefined) =>
      db
        .selectFrom('oauth_sessions')
        .selectAll()
        .where('expires_at', '>', now)
        .$if(after !== undefined, (qb) => qb.where('sid', '>', after!.sid))
        .orderBy('sid')
        .limit(PAGE)
        .execute(),
    (sessions) =>
      insertEphemeral(
        db,
        sessions.map((s) => ({
          key: ephemeralKeys.session(s.sid),
          value: s.data,
          expires_at: Number(s.expires_at),
        })),
      ),
  );
}

async function moveNonces(db: Db, now: number): Promise<void> {
  await eachPage(
    (after: { scope: string; nonce: string } | undefined) =>
      db
        .selectFrom('oauth_nonces')
        .selectAll()
        .where('expires_at', '>', now)
        .$if(after !== undefined, (qb) =>
          qb.where((eb) => eb(eb.refTuple('scope', 'nonce'), '>', eb.tuple(after!.scope, after!.nonce))),
        )
        .orderBy('scope')
        .orderBy('nonce')
        .limit(PAGE)
        .execute(),
    (nonces) =>
      insertEphemeral(
        db,
        nonces.map((n) => ({
          key: ephemeralKeys.nonce(n.scope, n.nonce),
          value: '1',
          expires_at: Number(n.expires_at),
        })),
      ),
  );
}

/** A counter's count as text, expiring when its window ended. */
async function moveRateLimits(db: Db, now: number): Promise<void> {
  await eachPage(
    (after: { key: string } | undefined) =>
      db
        .selectFrom('oauth_rate_limits')
        .selectAll()
        .where('reset_at', '>', now)
        .$if(after !== undefined, (qb) => qb.where('key', '>', after!.key))
        .orderBy('key')
        .limit(PAGE)
        .execute(),
    (counters) =>
      insertEphemeral(
        db,
        counters.map((c) => ({
          key: ephemeralKeys.rateLimit(c.key),
          value: String(c.count),
          expires_at: Number(c.reset_at),
        })),
      ),
  );
}

async function insertEphemeral(db: Db, rows: Insertable<Database['oauth_ephemeral']>[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('oauth_ephemeral')
    .values(rows)
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
}

/** Reads a table a page at a time, in key order, each page after the last row of the one before. */
async function eachPage<R>(
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

const scopesOf = (text: string) => (text === '' ? [] : text.split(' '));
