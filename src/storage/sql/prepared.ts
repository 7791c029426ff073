import type { Compilable, CompiledQuery, Kysely, QueryResult, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** Where a prepared query runs: the Kysely instance (with its schema, if any) or a transaction of it. */
export type Executor = Kysely<Database> | Transaction<Database>;

/** A query built and compiled once; each call runs its SQL with the given values bound. */
export type PreparedQuery<P, O> = ((db: Executor, params: P) => Promise<QueryResult<O>>) & {
  /** The compiled SQL, the same for every call. */
  readonly sql: string;
  /** The values bound to the SQL's parameters for `params`, in order (for a batch). */
  bind(params: P): unknown[];
};

/**
 * Runs compiled SQL on `db`'s connection at once, bypassing Kysely's executor, and returns what
 * Kysely would have resolved; or returns `undefined` when it cannot do so safely now, and the
 * query goes through Kysely. Throws what Kysely would have rejected with. See sqlite-direct.ts.
 */
export type DirectRunner = (
  db: Executor,
  sql: string,
  parameters: readonly unknown[],
) => QueryResult<unknown> | undefined;

/** One statement of a batch: its SQL and its bound values. */
export interface BatchStep {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * Runs the statements of a batch in one transaction at once, when the executor's connection is
 * free (SQLite), resolving each statement's result; `undefined` when it cannot, and the batch then
 * goes through a Kysely transaction.
 */
export type DirectBatchRunner = (
  db: Executor,
  steps: readonly BatchStep[],
) => QueryResult<unknown>[] | undefined;

export interface PrepareOptions {
  /** Receives the SQL text (to run it as a named statement on PostgreSQL). */
  onCompiled?: (sql: string) => void;
  /** Tried before Kysely on each call (SQLite). */
  runDirectly?: DirectRunner;
}

/** Stands in for the value of parameter `name` while the query is built and compiled. */
class Placeholder {
  constructor(readonly name: string) {}
}

/**
 * Builds a query once, with a placeholder in place of each value of `params`, compiles it, and
 * returns a function that runs the compiled SQL with new values. Building and compiling a query
 * with Kysely costs far more than running a primary-key lookup, and the same SQL text each time
 * lets the driver reuse its prepared statement (see statements.ts).
 *
 * `build` must use each parameter as a plain value (`where(col, '=', p.x)`, `values({ col: p.x })`,
 * `set({ col: p.x })`, `${p.x}` in `sql`), never compute with it or branch on it: the query's
 * shape is fixed when it is compiled. Values that are not parameters (a literal `0`) stay as
 * compiled. The SQL is compiled by the Kysely instance `build` uses, so its `withSchema` applies.
 * Kysely compiles the SQL text either way: `runDirectly` only runs the same text sooner.
 *
 * @example
 * const findUser = prepareQuery((p: { id: string }) => db.selectFrom('oauth_users').selectAll().where('id', '=', p.id));
 * const { rows } = await findUser(db, { id });
 */
export function prepareQuery<P extends Record<string, unknown>, O>(
  build: (params: P) => Compilable<O>,
  { onCompiled, runDirectly }: PrepareOptions = {},
): PreparedQuery<P, O> {
  const used = new Set<string>();
  const placeholders = new Proxy({} as P, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      used.add(name);
      return new Placeholder(name);
    },
  });
  const compiled = build(placeholders).compile();
  // Per parameter of the compiled SQL: the name of the value it takes, or the constant it is.
  const names: (string | undefined)[] = [];
  const constants: unknown[] = [];
  for (const parameter of compiled.parameters) {
    names.push(parameter instanceof Placeholder ? parameter.name : undefined);
    constants.push(parameter instanceof Placeholder ? undefined : parameter);
  }
  for (const name of used) {
    if (!names.includes(name)) {
      throw new Error(`prepareQuery: parameter ${name} was not compiled as a bound value: ${compiled.sql}`);
    }
  }
  const { query, queryId, sql } = compiled;
  onCompiled?.(sql);
  const count = names.length;
  const bind = (params: P): unknown[] => {
    const parameters = new Array<unknown>(count);
    for (let i = 0; i < count; i++) {
      const name = names[i];
      parameters[i] = name === undefined ? constants[i] : params[name];
    }
    return parameters;
  };
  const run = (db: Executor, params: P): Promise<QueryResult<O>> => {
    const parameters = bind(params);
    if (runDirectly !== undefined) {
      let result: QueryResult<unknown> | undefined;
      try {
        result = runDirectly(db, sql, parameters);
      } catch (err) {
        return Promise.reject(err);
      }
      if (result !== undefined) return Promise.resolve(result as QueryResult<O>);
    }
    const compiledQuery: CompiledQuery<O> = { query, queryId, sql, parameters };
    return db.executeQuery(compiledQuery);
  };
  return Object.assign(run, { sql, bind });
}
