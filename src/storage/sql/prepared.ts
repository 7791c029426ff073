import { createHash } from 'node:crypto';
import {
  type Compilable,
  CompiledQuery,
  type Kysely,
  type PostgresPool,
  sql,
  type SqliteDatabase,
  type SqliteStatement,
} from 'kysely';
import type { Database } from './schema.js';

/**
 * A parameter of a prepared statement: a query built for {@link PrepareStatement} takes its
 * values where it says `param`, and each run binds them in that order.
 *
 * @example
 * const get = prepare(db.selectFrom('oauth_ephemeral').select('value').where('key', '=', param));
 * const [row] = await get([key]);
 */
export const param = sql.raw<never>('?');

/** A statement prepared once; each call runs it with `values` bound to its parameters, in order. */
export type Prepared<O> = (values: readonly unknown[]) => Promise<O[]>;

/** Prepares `query`, compiled once by Kysely, with the driver's own prepared statements. */
export type PrepareStatement = <O>(query: Compilable<O>) => Prepared<O>;

/** The driver the statements run on, as the adapter's handle gave it. */
export type StatementDriver =
  | { sqlite: SqliteDatabase }
  | {
      postgres: PostgresPool;
      /** Run as named statements; `false` behind a pooler that keeps none (PgBouncer). */
      named: boolean;
    };

/** A `pg` client's query with a config object, which Kysely's `PostgresPoolClient` type leaves out. */
interface PgClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * The SQL adapter's statements on the request path, prepared with the driver's own API. Building
 * and compiling a query with Kysely costs more than running a primary-key lookup, and so does
 * having the database parse and plan it each time: each statement is compiled once, then run as
 * a `better-sqlite3` statement prepared once (SQLite) or a named statement, which each connection
 * parses and plans once (PostgreSQL, `pg`'s `name`). The SQL text is the one Kysely compiles,
 * so a schema of `db` (`withSchema`) applies. A query must give every value as {@link param}.
 *
 * On SQLite a statement runs at once on the handle, unless a transaction is open on it (a Kysely
 * transaction: `clients.remove`, a migration): then it waits in Kysely's queue for the
 * connection, since run now it would join that transaction.
 *
 * @internal
 */
export function statementPreparer(db: Kysely<Database>, driver: StatementDriver): PrepareStatement {
  const throughKysely = async <O>(text: string, values: readonly unknown[]) =>
    (await db.executeQuery(CompiledQuery.raw(text, [...values]))).rows as O[];

  return <O>(query: Compilable<O>): Prepared<O> => {
    const compiled = query.compile();
    if (compiled.parameters.length > 0)
      throw new Error(`a prepared statement takes its values as param: ${compiled.sql}`);
    if ('sqlite' in driver) {
      const database = driver.sqlite as SqliteDatabase & { readonly inTransaction?: boolean };
      const text = compiled.sql;
      let statement: SqliteStatement | undefined;
      return async (values) => {
        if (database.inTransaction === true) return throughKysely<O>(text, values);
        statement ??= database.prepare(text);
        if (statement.reader) return statement.all(values) as O[];
        statement.run(values);
        return [];
      };
    }
    let n = 0;
    const text = compiled.sql.replace(/\?/g, () => `$${++n}`);
    if (!driver.named) return (values) => throughKysely<O>(text, values);
    // A hash of the text: adapters sharing a pool agree on it, and two schemas' texts differ.
    const name = `oob_${createHash('sha256').update(text).digest('base64url').slice(0, 40)}`;
    const { postgres: pool } = driver;
    return async (values) => {
      const client = await pool.connect();
      try {
        const { rows } = await (client as unknown as PgClient).query({ name, text, values: [...values] });
        return rows as O[];
      } finally {
        client.release();
      }
    };
  };
}
