import { sql } from 'kysely';
import type { EphemeralCounter, EphemeralStore } from '../types.js';
import type { SqlContext } from './context.js';
import { DEFAULT_BATCH_SIZE, deleteInBatches } from './prune.js';

/**
 * The upsert of `key`: insert, or overwrite value and expiry on a conflict; with
 * `onlyExpiredAt`, only a row expired at that instant.
 */
function upsert(
  db: SqlContext['db'],
  p: { key: string; value: string; expiresAt: number },
  onlyExpiredAt?: number,
) {
  return db
    .insertInto('oauth_ephemeral')
    .values({ key: p.key, value: p.value, expires_at: p.expiresAt })
    .onConflict((oc) => {
      const update = oc.column('key').doUpdateSet((eb) => ({
        value: eb.ref('excluded.value'),
        expires_at: eb.ref('excluded.expires_at'),
      }));
      return onlyExpiredAt === undefined
        ? update
        : update.where('oauth_ephemeral.expires_at', '<=', onlyExpiredAt);
    });
}

/** The upsert of `ephemeral.set`, prepared. */
export function preparePut({ db, prepare }: Pick<SqlContext, 'db' | 'prepare'>) {
  return prepare((p: { key: string; value: string; expiresAt: number }) => upsert(db, p));
}

/** The upsert of `ephemeral.add`, prepared: returns the key only when it wrote the row. */
export function preparePutIfAbsent({ db, prepare }: Pick<SqlContext, 'db' | 'prepare'>) {
  return prepare((p: { key: string; value: string; expiresAt: number; now: number }) =>
    upsert(db, p, p.now).returning('key'),
  );
}

/** The read of `ephemeral.get`, prepared: a live entry's value. */
export function prepareGet({ db, prepare }: Pick<SqlContext, 'db' | 'prepare'>) {
  return prepare((p: { key: string; now: number }) =>
    db.selectFrom('oauth_ephemeral').select('value').where('key', '=', p.key).where('expires_at', '>', p.now),
  );
}

/** What `ephemeral.get` and `ephemeral.take` resolve from their rows. */
export const valueOf = (rows: readonly { value: string }[]): string | null => rows[0]?.value ?? null;

/** The `DELETE … RETURNING` of `ephemeral.take`, prepared. */
export function prepareTake({ db, prepare }: Pick<SqlContext, 'db' | 'prepare'>) {
  return prepare((p: { key: string; now: number }) =>
    db
      .deleteFrom('oauth_ephemeral')
      .where('key', '=', p.key)
      .where('expires_at', '>', p.now)
      .returning('value'),
  );
}

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
 * - `increment` is one upsert whose update restarts an expired counter, so every racing caller
 *   reads back the count its own statement wrote. The count is stored as text (the column holds
 *   any value), cast to an integer to add one.
 */
export function sqlEphemeralStore(ctx: SqlContext): Required<EphemeralStore> {
  const { db, prepare } = ctx;
  const find = prepareGet(ctx);
  const put = preparePut(ctx);
  const putIfAbsent = preparePutIfAbsent(ctx);
  const takeLive = prepareTake(ctx);
  const count = prepare((p: { key: string; expiresAt: number; now: number }) => {
    const expired = sql<boolean>`${sql.ref('oauth_ephemeral.expires_at')} <= ${p.now}`;
    return db
      .insertInto('oauth_ephemeral')
      .values({ key: p.key, value: '1', expires_at: p.expiresAt })
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
      .returning(['value', 'expires_at']);
  });
  const remove = prepare((p: { key: string }) => db.deleteFrom('oauth_ephemeral').where('key', '=', p.key));

  return {
    async get(key, now) {
      return valueOf((await find(db, { key, now })).rows);
    },
    async set(key, value, expiresAt) {
      await put(db, { key, value, expiresAt });
    },
    async add(key, value, expiresAt, now) {
      return (await putIfAbsent(db, { key, value, expiresAt, now })).rows.length > 0;
    },
    async take(key, now) {
      return valueOf((await takeLive(db, { key, now })).rows);
    },
    async increment(key, expiresAt, now): Promise<EphemeralCounter> {
      const [row] = (await count(db, { key, expiresAt, now })).rows;
      if (row === undefined) throw new Error('oauth_ephemeral: the counter upsert returned no row');
      return { count: Number(row.value), expiresAt: Number(row.expires_at) };
    },
    async delete(key) {
      await remove(db, { key });
    },
    async prune(now) {
      return deleteInBatches(ctx, 'oauth_ephemeral', (eb) => eb('expires_at', '<=', now), DEFAULT_BATCH_SIZE);
    },
  };
}
