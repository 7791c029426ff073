import { type Expression, type ExpressionBuilder, type SqlBool, sql } from 'kysely';
import type { PruneOptions, PruneResult } from '../types.js';
import { DEFAULT_USAGE_RETENTION_MS, firstKeptDay } from '../usage-types.js';
import type { SqlContext } from './context.js';
import type { Database } from './schema.js';

export const DEFAULT_BATCH_SIZE = 1000;
const DEFAULT_REVOKED_GRANT_RETENTION_MS = 30 * 86_400_000;

/**
 * `Storage.prune` on SQL: expired ephemeral entries, then grants revoked longer ago than the
 * retention, then self-registered clients never used past their time (with their grants), then
 * every token that can no longer work. Each statement deletes at most `batchSize` rows, and
 * instances pruning at once neither fail nor count a row twice.
 */
export async function pruneSqlStorage(
  ctx: SqlContext,
  now: number,
  options: PruneOptions = {},
): Promise<PruneResult> {
  const batch = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(batch) || batch < 1) throw new TypeError('batchSize must be a positive integer');
  const retention = options.revokedGrantRetentionMs ?? DEFAULT_REVOKED_GRANT_RETENTION_MS;
  const ephemeral = await deleteInBatches(ctx, 'oauth_ephemeral', (eb) => eb('expires_at', '<=', now), batch);
  const grants = await deleteInBatches(
    ctx,
    'oauth_grants',
    (eb) => eb('revoked_at', '<=', now - retention),
    batch,
  );
  const clients = await pruneUnusedClients(ctx, now, batch);
  const tokens = await pruneTokens(ctx, now, batch);
  return { ephemeral, grants, tokens, clients, usage: await pruneUsage(ctx, now, options, batch) };
}

/** Usage older than its retention: day counts before its first kept day, last uses at or before it. */
async function pruneUsage(
  ctx: SqlContext,
  now: number,
  options: PruneOptions,
  batch: number,
): Promise<number> {
  const { db, postgres } = ctx;
  const retention = options.usageRetentionMs ?? DEFAULT_USAGE_RETENTION_MS;
  const firstDay = firstKeptDay(now, retention);
  let total = 0;
  // Chosen by the day's index and deleted by primary key, as deleteInBatches does (whose keys are
  // one column; these are composite).
  for (;;) {
    const chosen = db
      .selectFrom('oauth_usage')
      .select(['client_id', 'day', 'kind'])
      .where('day', '<', firstDay)
      .limit(batch)
      .$if(postgres, (qb) => qb.forUpdate().skipLocked());
    const result = await db
      .deleteFrom('oauth_usage')
      .where((eb) =>
        eb(eb.refTuple('client_id', 'day', 'kind'), 'in', chosen.$asTuple('client_id', 'day', 'kind')),
      )
      .executeTakeFirst();
    total += Number(result.numDeletedRows);
    if (Number(result.numDeletedRows) < batch) break;
  }
  for (;;) {
    const chosen = db
      .selectFrom('oauth_usage_last')
      .select(['client_id', 'user_id'])
      .where('last_used_at', '<=', now - retention)
      .limit(batch)
      .$if(postgres, (qb) => qb.forUpdate().skipLocked());
    const result = await db
      .deleteFrom('oauth_usage_last')
      .where((eb) => eb(eb.refTuple('client_id', 'user_id'), 'in', chosen.$asTuple('client_id', 'user_id')))
      .executeTakeFirst();
    total += Number(result.numDeletedRows);
    if (Number(result.numDeletedRows) < batch) return total;
  }
}

/**
 * Deletes the self-registered clients whose `unused_expires_at` is at or before `now` (found by
 * its index; a client in use, or registered by the operator, has none), a batch at a time, each
 * batch with its grants in one transaction, as `clients.remove` does. A client whose first token
 * cleared its expiry after the batch was chosen is kept: the delete tests the expiry again.
 */
async function pruneUnusedClients({ db, postgres }: SqlContext, now: number, batch: number): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.transaction().execute(async (trx) => {
      const chosen = await trx
        .selectFrom('oauth_clients')
        .select('client_id')
        .where('unused_expires_at', '<=', now)
        .limit(batch)
        .$if(postgres, (qb) => qb.forUpdate().skipLocked())
        .execute();
      if (chosen.length === 0) return { count: 0, chosen: 0 };
      const ids = chosen.map((row) => row.client_id);
      const removed = await trx
        .deleteFrom('oauth_clients')
        .where('client_id', 'in', ids)
        .where('unused_expires_at', '<=', now)
        .returning('client_id')
        .execute();
      const gone = removed.map((row) => row.client_id);
      if (gone.length) await trx.deleteFrom('oauth_grants').where('client_id', 'in', gone).execute();
      return { count: gone.length, chosen: chosen.length };
    });
    total += deleted.count;
    if (deleted.chosen < batch) return total;
  }
}

type BatchedTable = 'oauth_ephemeral' | 'oauth_grants';

/** The key by which a batch of each table is chosen and then deleted. */
const KEY = { oauth_ephemeral: 'key', oauth_grants: 'grant_id' } as const;

/** Which rows of a table are no longer needed. */
type Condition<T extends BatchedTable> = (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>;

/**
 * Deletes the rows matching `expired` a batch at a time (found by an index on the column it
 * tests), so no statement holds locks on a large part of a table. On PostgreSQL, `FOR UPDATE SKIP
 * LOCKED` lets instances pruning at once take different rows instead of waiting on each other;
 * SQLite runs one writer at a time anyway.
 */
export async function deleteInBatches<T extends BatchedTable>(
  { db, postgres }: SqlContext,
  table: T,
  expired: Condition<T>,
  batch: number,
): Promise<number> {
  const key = KEY[table];
  let total = 0;
  for (;;) {
    // One generic statement for both tables; `key` is a fixed column name, never input.
    const chosen = db
      .selectFrom(table as 'oauth_ephemeral')
      .select(sql.ref(key).as('key'))
      .where(expired as unknown as Condition<'oauth_ephemeral'>)
      .limit(batch)
      .$if(postgres, (qb) => qb.forUpdate().skipLocked());
    const result = await db
      .deleteFrom(table as 'oauth_ephemeral')
      .where(sql.ref(key), 'in', chosen)
      .executeTakeFirst();
    const deleted = Number(result.numDeletedRows);
    total += deleted;
    if (deleted < batch) return total;
  }
}

/**
 * Whether a token (aliased `t`) can no longer work at `now`: it expired, no standing grant has
 * its `grant_id` (revoked, replaced by a later grant of the same user and client, or deleted), or
 * its client is gone. The same reading of its grant and client as `tokens.find`'s joins.
 */
function cannotWork(now: number) {
  return (eb: ExpressionBuilder<Database & { t: Database['oauth_tokens'] }, 't'>) =>
    eb.or([
      eb('t.expires_at', '<=', now),
      eb.not(
        eb.exists(
          eb
            .selectFrom('oauth_grants as g')
            .select('g.grant_id')
            .whereRef('g.grant_id', '=', 't.grant_id')
            .where('g.revoked_at', 'is', null),
        ),
      ),
      eb.not(
        eb.exists(
          eb
            .selectFrom('oauth_clients as c')
            .select('c.client_id')
            .whereRef('c.client_id', '=', 't.client_id'),
        ),
      ),
    ]);
}

/**
 * Deletes the tokens that can no longer work, walking the table in `token_hash` order a window of
 * `batch` tokens at a time. A token of a replaced grant or of a removed client is told apart only
 * by what is missing from another table, which no index on the tokens can list, so every token
 * is read once per call; each window is a range of the primary key, and its grant and client are
 * primary-key probes. The token table then needs no index besides its primary key, which keeps
 * `tokens.save` cheap.
 */
async function pruneTokens({ db, postgres }: SqlContext, now: number, batch: number): Promise<number> {
  let total = 0;
  // Every hash is `>= ''`: the first window starts there, so each query is a range of the key.
  let from: { op: '>=' | '>'; hash: string } = { op: '>=', hash: '' };
  for (;;) {
    // The last hash of the next window; none when fewer than `batch` tokens remain.
    const bound = await db
      .selectFrom('oauth_tokens')
      .select('token_hash')
      .where('token_hash', from.op, from.hash)
      .orderBy('token_hash')
      .limit(1)
      .offset(batch - 1)
      .executeTakeFirst();
    const last = bound?.token_hash;
    const chosen = db
      .selectFrom('oauth_tokens as t')
      .select('t.token_hash')
      .where('t.token_hash', from.op, from.hash)
      .$if(last !== undefined, (qb) => qb.where('t.token_hash', '<=', last!))
      .where(cannotWork(now))
      .$if(postgres, (qb) => qb.forUpdate().skipLocked());
    const result = await db.deleteFrom('oauth_tokens').where('token_hash', 'in', chosen).executeTakeFirst();
    total += Number(result.numDeletedRows);
    if (last === undefined) return total;
    from = { op: '>', hash: last };
  }
}
