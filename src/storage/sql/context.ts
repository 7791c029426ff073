import type { Compilable, Kysely } from 'kysely';
import type { StatementNames } from './named.js';
import { type DirectBatchRunner, type DirectRunner, type PreparedQuery, prepareQuery } from './prepared.js';
import type { Database } from './schema.js';

export type SqlDialectName = 'postgres' | 'sqlite';

/** How the frequent queries run besides Kysely: named on PostgreSQL, directly on SQLite. */
export interface HotQueryOptions {
  statementNames?: StatementNames;
  runDirectly?: DirectRunner;
  runBatchDirectly?: DirectBatchRunner;
}

/**
 * What every store of the SQL adapter is built over.
 *
 * @internal
 */
export interface SqlContext {
  /** The Kysely instance, in the adapter's PostgreSQL schema if it has one. */
  db: Kysely<Database>;
  postgres: boolean;
  /**
   * {@link prepareQuery} with the adapter's hot-query options: the compiled SQL runs as a named
   * statement on PostgreSQL and on the direct path on SQLite.
   */
  prepare<P extends Record<string, unknown>, O>(build: (params: P) => Compilable<O>): PreparedQuery<P, O>;
  /** Runs SQL built at run time as a named statement too (PostgreSQL, when statements are named). */
  nameStatement(sql: string): void;
  /** SQLite: a statement run at once, when the connection is free. */
  runDirectly?: DirectRunner;
  /** SQLite: a batch's statements in one synchronous transaction, when the connection is free. */
  runBatchDirectly?: DirectBatchRunner;
}

/** @internal */
export function sqlContext(
  db: Kysely<Database>,
  dialect: SqlDialectName,
  { statementNames, runDirectly, runBatchDirectly }: HotQueryOptions,
): SqlContext {
  const onCompiled = statementNames && ((sql: string) => statementNames.add(sql));
  return {
    db,
    postgres: dialect === 'postgres',
    prepare: (build) => prepareQuery(build, { onCompiled, runDirectly }),
    nameStatement: (sql) => statementNames?.add(sql),
    ...(runDirectly === undefined ? {} : { runDirectly }),
    ...(runBatchDirectly === undefined ? {} : { runBatchDirectly }),
  };
}
