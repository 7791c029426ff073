import type { LastUse, UsageBatch, UsageCount, UsageKind, UsageStore } from '../usage-types.js';
import type { SqlContext } from './context.js';

/** Rows per insert: well under SQLite's and PostgreSQL's limits on bound parameters. */
const ROWS_PER_STATEMENT = 500;

/**
 * The {@link UsageStore} on tables `oauth_usage` (one row per client, day and kind) and
 * `oauth_usage_last` (one row per client and account, `user_id` `''` for the client's own). Off
 * the request path (the recorder adds a batch now and then), so the statements are built by
 * Kysely each time rather than prepared.
 */
export function sqlUsageStore({ db }: SqlContext): UsageStore {
  return {
    async add(batch) {
      const { counts, lastUse } = merged(batch);
      if (counts.length === 0 && lastUse.length === 0) return;
      // One transaction: a failed batch adds nothing, and the recorder adds it again. Between
      // statements it lets the event loop run: better-sqlite3 answers at once, so 40,000 rows in
      // a row would hold every request of the process for most of a second.
      await db.transaction().execute(async (trx) => {
        for (const rows of chunks(counts)) {
          await yieldToEventLoop();
          await trx
            .insertInto('oauth_usage')
            .values(rows.map((c) => ({ client_id: c.clientId, day: c.day, kind: c.kind, count: c.count })))
            .onConflict((oc) =>
              oc
                .columns(['client_id', 'day', 'kind'])
                .doUpdateSet((eb) => ({ count: eb('oauth_usage.count', '+', eb.ref('excluded.count')) })),
            )
            .execute();
        }
        for (const rows of chunks(lastUse)) {
          await yieldToEventLoop();
          await trx
            .insertInto('oauth_usage_last')
            .values(rows.map((u) => ({ client_id: u.clientId, user_id: u.userId ?? '', last_used_at: u.at })))
            .onConflict((oc) =>
              oc
                .columns(['client_id', 'user_id'])
                .doUpdateSet((eb) => ({ last_used_at: eb.ref('excluded.last_used_at') }))
                // Never back: a batch from a slower instance keeps the later use.
                .where((eb) => eb('oauth_usage_last.last_used_at', '<', eb.ref('excluded.last_used_at'))),
            )
            .execute();
        }
      });
    },

    async counts(filter) {
      const rows = await db
        .selectFrom('oauth_usage')
        .select(['client_id', 'day', 'kind', 'count'])
        .where('day', '>=', filter.since)
        .$if(filter.clientId !== undefined, (qb) => qb.where('client_id', '=', filter.clientId!))
        .orderBy('client_id')
        .orderBy('day')
        .orderBy('kind')
        .execute();
      return rows.map((row) => ({
        clientId: row.client_id,
        day: row.day,
        kind: row.kind as UsageKind,
        count: Number(row.count),
      }));
    },

    async lastUse(filter) {
      const rows = await db
        .selectFrom('oauth_usage_last')
        .select(['client_id', 'user_id', 'last_used_at'])
        .$if(filter.clientId !== undefined, (qb) => qb.where('client_id', '=', filter.clientId!))
        .$if(filter.userId !== undefined, (qb) => qb.where('user_id', '=', filter.userId ?? ''))
        .orderBy('client_id')
        .orderBy('user_id')
        .execute();
      return rows.map((row) => ({
        clientId: row.client_id,
        userId: row.user_id === '' ? null : row.user_id,
        at: Number(row.last_used_at),
      }));
    },
  };
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The batch with one entry per key (counts summed, the latest use kept): an upsert may not touch
 * one row twice in a statement (PostgreSQL refuses it). In key order: two instances writing the
 * same rows lock them in the same order, so neither waits for the other in a circle (PostgreSQL
 * aborted one of them as a deadlock in 8 runs of 10 with the recorder's order of first use).
 */
function merged(batch: UsageBatch): UsageBatch {
  const counts = new Map<string, UsageCount>();
  for (const c of batch.counts) {
    const key = JSON.stringify([c.clientId, c.day, c.kind]);
    const seen = counts.get(key);
    counts.set(key, seen ? { ...seen, count: seen.count + c.count } : c);
  }
  const lastUse = new Map<string, LastUse>();
  for (const u of batch.lastUse) {
    const key = JSON.stringify([u.clientId, u.userId ?? '']);
    const seen = lastUse.get(key);
    if (!seen || seen.at < u.at) lastUse.set(key, u);
  }
  return { counts: inKeyOrder(counts), lastUse: inKeyOrder(lastUse) };
}

function inKeyOrder<T>(entries: Map<string, T>): T[] {
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, value]) => value);
}

function* chunks<T>(rows: T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) yield rows.slice(i, i + ROWS_PER_STATEMENT);
}
