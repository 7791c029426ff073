import { sql } from 'kysely';
import type { EphemeralCounter, EphemeralStore } from '../types.js';
import type { SqlContext } from './context.js';
import { param } from './prepared.js';
import { DEFAULT_BATCH_SIZE, deleteInBatches } from './prune.js';

/**
 * The {@link EphemeralStore} on table `oauth_ephemeral`. Each method is one statement, so its
 * guarantee is the database's: an entry counts as absent once `expires_at <= now`, whether or
 * not `prune` has deleted it yet.
 *
 * - `add` is an upsert that overwrites only an expired row. On PostgreSQL racing inserts of one
 *   key meet at the primary key, and racing overwrites of an expired row at its row lock; the
 *   loser re-checks the row the winner wrote, which is no longer expired, and writes nothing. So
 *   exactly one caller sees a row returned. SQLite runs one writer at a time.
 * - `take` is `DELETE … RETURNING`: only the statement that deletes the row returns its value.
 * - `replace` is one `UPDATE … WHERE value = expected`: on PostgreSQL a racing update waits for
 *   the row lock, then re-checks the row the winner wrote, whose value is no longer the expected
 *   one, and writes nothing.
 * - `increment` is one upsert whose update restarts an expired counter, so every racing caller
 *   reads back the count its own statement wrote. The count is stored as text (the column holds
 *   any value), cast to an integer to add one.
 */
export function sqlEphemeralStore(ctx: SqlContext): Required<EphemeralStore> {
  const { db, prepare } = ctx;
  /** Inserts [key, value, expiresAt], or overwrites value and expiry (with `onlyExpired`: of a row expired at [now]). */
  const upsert = (onlyExpired: boolean) =>
    db
      .insertInto('oauth_ephemeral')
      .values({ key: param, value: param, expires_at: param })
      .onConflict((oc) => {
        const update = oc.column('key').doUpdateSet((eb) => ({
          value: eb.ref('excluded.value'),
          expires_at: eb.ref('excluded.expires_at'),
        }));
        return onlyExpired ? update.where('oauth_ephemeral.expires_at', '<=', param) : update;
      });
  // [key, value, expiresAt]
  const put = prepare(upsert(false));
  // [key, value, expiresAt, now]: returns the key only when it wrote the row.
  const putIfExpired = prepare(upsert(true).returning('key'));
  // [key, now]
  const find = prepare(
    db.selectFrom('oauth_ephemeral').select('value').where('key', '=', param).where('expires_at', '>', param),
  );
  // [key, now]
  const takeLive = prepare(
    db
      .deleteFrom('oauth_ephemeral')
      .where('key', '=', param)
      .where('expires_at', '>', param)
      .returning('value'),
  );
  // [value, expiresAt, key, expected, now]: returns the key only when it replaced the value.
  const compareAndSet = prepare(
    db
      .updateTable('oauth_ephemeral')
      .set({ value: param, expires_at: param })
      .where('key', '=', param)
      .where('value', '=', param)
      .where('expires_at', '>', param)
      .returning('key'),
  );
  // [key, expiresAt, now, now]
  const expired = sql<boolean>`${sql.ref('oauth_ephemeral.expires_at')} <= ${param}`;
  const count = prepare(
    db
      .insertInto('oauth_ephemeral')
      .values({ key: param, value: sql<string>`'1'`, expires_at: param })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => ({
          value: eb
            .case()
            .when(expired)
            .then(sql<string>`'1'`)
            .else(sql<string>`cast(cast(${sql.ref('oauth_ephemeral.value')} as bigint) + 1 as text)`)
            .end(),
          expires_at: eb
            .case()
            .when(expired)
            .then(eb.ref('excluded.expires_at'))
            .else(eb.ref('oauth_ephemeral.expires_at'))
            .end(),
        })),
      )
      .returning(['value', 'expires_at']),
  );
  // [key]
  const remove = prepare(db.deleteFrom('oauth_ephemeral').where('key', '=', param));

  return {
    async get(key, now) {
      const [row] = await find([key, now]);
      return row?.value ?? null;
    },
    async set(key, value, expiresAt) {
      await put([key, value, expiresAt]);
    },
    async add(key, value, expiresAt, now) {
      return (await putIfExpired([key, value, expiresAt, now])).length > 0;
    },
    async take(key, now) {
      const [row] = await takeLive([key, now]);
      return row?.value ?? null;
    },
    async replace(key, expected, value, expiresAt, now) {
      return (await compareAndSet([value, expiresAt, key, expected, now])).length > 0;
    },
    async increment(key, expiresAt, now): Promise<EphemeralCounter> {
      const [row] = await count([key, expiresAt, now, now]);
      if (row === undefined) throw new Error('oauth_ephemeral: the counter upsert returned no row');
      return { count: Number(row.value), expiresAt: Number(row.expires_at) };
    },
    async delete(key) {
      await remove([key]);
    },
    async prune(now) {
      return deleteInBatches(ctx, 'oauth_ephemeral', (eb) => eb('expires_at', '<=', now), DEFAULT_BATCH_SIZE);
    },
  };
}
