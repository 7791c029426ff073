import {
  type DatabaseConnection,
  Kysely,
  type QueryResult,
  SqliteDialect,
  type SqliteDatabase,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import type { BatchStep, DirectBatchRunner, DirectRunner, Executor } from './prepared.js';
import type { Database } from './schema.js';
import { cachingStatements } from './statements.js';

/** `better-sqlite3`'s own state of the connection, which Kysely's `SqliteDatabase` leaves out. */
interface ConnectionState {
  readonly open?: unknown;
  readonly inTransaction?: unknown;
}

/** How many Kysely callers hold the connection or wait for it, and whether one ever has. */
interface Holders {
  count: number;
  started: boolean;
}

/**
 * Kysely's SqliteDriver, counting its callers. `acquireConnection` is called as soon as a query
 * or transaction asks for the connection (once the driver is initialised), before it waits on
 * the driver's mutex, and `releaseConnection` when it is done: a count of 0 means nobody holds
 * the connection and nobody is queued for it.
 */
class CountingSqliteDriver extends SqliteDriver {
  constructor(
    config: SqliteDialectConfig,
    private readonly holders: Holders,
  ) {
    super(config);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    this.holders.count++;
    this.holders.started = true;
    try {
      return await super.acquireConnection();
    } catch (err) {
      this.holders.count--;
      throw err;
    }
  }

  override async releaseConnection(): Promise<void> {
    try {
      await super.releaseConnection();
    } finally {
      this.holders.count--;
    }
  }
}

class CountingSqliteDialect extends SqliteDialect {
  constructor(
    private readonly config: SqliteDialectConfig,
    private readonly holders: Holders,
  ) {
    super(config);
  }

  override createDriver(): CountingSqliteDriver {
    return new CountingSqliteDriver(this.config, this.holders);
  }
}

/**
 * A Kysely instance over a `better-sqlite3` database, with its statements prepared once per SQL
 * text (see statements.ts), and a {@link DirectRunner} that runs a prepared query's SQL on the
 * same cached statement without going through Kysely's executor and driver.
 *
 * Going through Kysely costs a mutex, an acquire and a release and several promises per query,
 * a good part of what a primary-key lookup costs; `better-sqlite3` runs a statement synchronously, so
 * when the connection is free nothing can interleave with the direct run and the result is the
 * one Kysely would give. The runner declines (the query then takes Kysely's queue) unless:
 *
 * - the executor is this instance itself: never a transaction (whose queries must run on its
 *   connection, in order) nor a derived instance that might carry result-transforming plugins;
 * - no Kysely query, transaction, `connection()` or `stream()` holds the connection or waits for
 *   it, so a direct query never overtakes one asked for earlier, and an open `iterate()` of a
 *   stream never makes the connection busy under it;
 * - Kysely has used the connection once (its driver is initialised);
 * - the database is open (a closed one gets Kysely's own error) and not in a transaction (one
 *   begun on the handle outside Kysely, or any that the count would miss).
 *
 * The result has the shape Kysely's SqliteDriver gives (`rows`; `numAffectedRows` and `insertId`
 * as bigints for statements that return no rows), and the instance has no plugins to transform it.
 * Errors are the driver's own, thrown as Kysely would reject with them, so `guardSqlFaults`
 * classifies them the same way.
 */
export function sqliteKysely(database: SqliteDatabase): {
  db: Kysely<Database>;
  runDirectly: DirectRunner;
  runBatchDirectly: DirectBatchRunner;
} {
  const holders: Holders = { count: 0, started: false };
  const statements = cachingStatements(database);
  const db = new Kysely<Database>({ dialect: new CountingSqliteDialect({ database: statements }, holders) });
  const state = database as SqliteDatabase & ConnectionState;
  const free = (executor: Executor) =>
    executor === db &&
    holders.count === 0 &&
    holders.started &&
    state.open === true &&
    state.inTransaction === false;
  // As Kysely's SqliteConnection.executeQuery does it.
  const run = (sql: string, parameters: readonly unknown[]): QueryResult<unknown> => {
    const statement = statements.prepare(sql);
    if (statement.reader) return { rows: statement.all(parameters) } as QueryResult<unknown>;
    const { changes, lastInsertRowid } = statement.run(parameters);
    return {
      numAffectedRows: changes !== undefined && changes !== null ? BigInt(changes) : undefined,
      insertId:
        lastInsertRowid !== undefined && lastInsertRowid !== null ? BigInt(lastInsertRowid) : undefined,
      rows: [],
    };
  };
  const runDirectly: DirectRunner = (executor, sql, parameters) =>
    free(executor) ? run(sql, parameters) : undefined;
  // One better-sqlite3 transaction (BEGIN, the statements, COMMIT, or ROLLBACK if one throws), run
  // synchronously: nothing else can use the connection in between.
  const { transaction } = database as SqliteDatabase & Partial<TransactionFactory>;
  const inOneTransaction =
    typeof transaction === 'function'
      ? transaction.call(database, (steps) => steps.map((step) => run(step.sql, step.parameters)))
      : undefined;
  const runBatchDirectly: DirectBatchRunner = (executor, steps) =>
    inOneTransaction !== undefined && free(executor) ? inOneTransaction(steps) : undefined;
  return { db, runDirectly, runBatchDirectly };
}

/** `better-sqlite3`'s `Database#transaction`, which Kysely's `SqliteDatabase` type leaves out. */
interface TransactionFactory {
  transaction(
    fn: (steps: readonly BatchStep[]) => QueryResult<unknown>[],
  ): (steps: readonly BatchStep[]) => QueryResult<unknown>[];
}
