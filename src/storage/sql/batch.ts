import { CompiledQuery, type QueryResult } from 'kysely';
import { runEach, type BatchStores } from '../batch.js';
import type { BatchOperation, BatchResults, Storage } from '../types.js';
import { clientOf, prepareClientFind } from './clients.js';
import type { SqlContext } from './context.js';
import { prepareGet, preparePut, preparePutIfAbsent, prepareTake, valueOf } from './ephemeral.js';
import { prepareGrantFind } from './grants.js';
import type { BatchStep, PreparedQuery } from './prepared.js';
import { scopeText, toGrant } from './rows.js';
import { foundTokenOf, prepareTokenFind, prepareTokenSaveFrom, prepareTokenUpsert } from './tokens.js';

type Rows = readonly Record<string, unknown>[];

/** One operation as SQL: its statement, and what it resolves from the statement's rows. */
interface Planned extends BatchStep {
  /**
   * PostgreSQL: a read is a subquery of the one statement returning its rows as JSON, a write a
   * CTE (`silent`: one without `RETURNING`).
   */
  kind: 'read' | 'write' | 'silent';
  /**
   * A read of one column of at most one row (a key's value; a token's row, already one JSON
   * text): PostgreSQL returns the column itself, not wrapped in JSON to be parsed twice.
   */
  column?: string;
  result(rows: Rows): unknown;
}

/**
 * {@link Storage.batch} for the SQL adapter: the very statements of the contract's methods, run
 * as one transaction.
 *
 * - SQLite: in one `better-sqlite3` transaction, synchronously when the connection is free (one
 *   commit to the WAL for all of them), else in a Kysely transaction.
 * - PostgreSQL: in one statement, one round trip: each write a data-modifying CTE, each read a
 *   subquery that returns its rows as JSON. They all see one snapshot, which is why the contract
 *   keeps two operations of a batch off the same key or token. A `take` in a CTE is still a
 *   `DELETE … RETURNING`, and an `add` still an upsert that writes only over an expired row, so
 *   their guarantees under races are those of the statements alone. The statement's text depends
 *   only on the sequence of operations: it is built once per sequence and runs as a named
 *   prepared statement.
 *
 * @internal
 */
export function sqlBatch(ctx: SqlContext): NonNullable<Storage['batch']> {
  let own: BatchStores | undefined;
  const saveToken = prepareTokenUpsert(ctx);
  const saveTokenFrom = prepareTokenSaveFrom(ctx);
  const put = preparePut(ctx);
  const take = prepareTake(ctx);
  const add = preparePutIfAbsent(ctx);
  const get = prepareGet(ctx);
  const findClient = prepareClientFind(ctx);
  const findToken = prepareTokenFind(ctx);
  const findGrant = prepareGrantFind(ctx);

  /** One operation as SQL: the statement of its method, with its values bound. */
  const step = <P extends Record<string, unknown>>(
    query: PreparedQuery<P, unknown>,
    params: P,
    kind: Planned['kind'],
    result: Planned['result'],
    column?: string,
  ): Planned => ({ sql: query.sql, parameters: query.bind(params), kind, result, column });

  const plan = (operation: BatchOperation): Planned => {
    switch (operation.op) {
      case 'tokens.save': {
        const { token } = operation;
        return step(saveToken, { ...token, scopes: scopeText(token.scopes) }, 'silent', () => undefined);
      }
      case 'tokens.saveFrom': {
        const { from, clientId, token } = operation;
        const params = { ...token, from, clientId };
        return step(saveTokenFrom, params, 'write', (rows) => rows.length > 0);
      }
      case 'ephemeral.set':
        return step(put, operation, 'silent', () => undefined);
      case 'ephemeral.take':
        return step(take, operation, 'write', valueOf as Planned['result']);
      case 'ephemeral.add':
        return step(add, operation, 'write', (rows) => rows.length > 0);
      case 'ephemeral.get':
        return step(get, operation, 'read', valueOf as Planned['result'], 'value');
      case 'clients.find':
        return step(findClient, operation, 'read', clientOf as Planned['result']);
      case 'tokens.find':
        return step(findToken, operation, 'read', foundTokenOf as Planned['result'], 'found');
      case 'grants.find':
        return step(findGrant, operation, 'read', (rows) => (rows[0] ? toGrant(rows[0] as never) : null));
    }
  };

  /** PostgreSQL: the one statement of a sequence of operations, by their names joined. */
  const statements = new Map<string, string>();
  const statementOf = (operations: readonly BatchOperation[], planned: readonly Planned[]): string => {
    const shape = operations.map((operation) => operation.op).join(',');
    let text = statements.get(shape);
    if (text === undefined) {
      const ctes: string[] = [];
      const columns: string[] = [];
      let offset = 0;
      planned.forEach((step, i) => {
        const shift = offset;
        const sql = step.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + shift}`);
        offset += step.parameters.length;
        if (step.column !== undefined) {
          columns.push(`(${sql}) as "r${i}"`);
        } else if (step.kind === 'read') {
          columns.push(`(select cast(json_agg("q${i}") as text) from (${sql}) as "q${i}") as "r${i}"`);
        } else {
          ctes.push(`"o${i}" as (${sql})`);
          // What a take deleted, what an add wrote; a silent write (an upsert) returns nothing.
          columns.push(
            step.kind === 'silent'
              ? `null as "r${i}"`
              : `(select cast(json_agg("o${i}") as text) from "o${i}") as "r${i}"`,
          );
        }
      });
      text = `${ctes.length > 0 ? `with ${ctes.join(', ')} ` : ''}select ${columns.join(', ')}`;
      statements.set(shape, text);
      ctx.nameStatement(text);
    }
    return text;
  };

  const runOne = (step: BatchStep): QueryResult<unknown> | Promise<QueryResult<unknown>> =>
    ctx.runDirectly?.(ctx.db, step.sql, step.parameters) ??
    ctx.db.executeQuery(CompiledQuery.raw(step.sql, [...step.parameters]));

  const batch = async function batch<const T extends readonly BatchOperation[]>(
    this: Partial<BatchStores> | undefined,
    operations: T,
  ): Promise<BatchResults<T>> {
    // A storage assembled from this adapter's stores and another's (`{ ...sql, ephemeral: redis }`)
    // carries this method along: its operations go to that storage's own stores, one by one.
    const stores = foreignStores(this, own);
    if (stores !== undefined) return runEach(stores, operations);
    if (operations.length === 0) return [] as unknown as BatchResults<T>;
    const planned = operations.map(plan);
    if (ctx.postgres) {
      const text = statementOf(operations, planned);
      const { rows } = await ctx.db.executeQuery<Record<string, string | null>>(
        CompiledQuery.raw(
          text,
          planned.flatMap((step) => step.parameters),
        ),
      );
      const row = rows[0] ?? {};
      return planned.map((step, i) => {
        const value = row[`r${i}`];
        if (value === null || value === undefined) return step.result([]);
        return step.result(step.column === undefined ? (JSON.parse(value) as Rows) : [{ [step.column]: value }]);
      }) as BatchResults<T>;
    }
    // SQLite reads nothing over a network: reads alone need no transaction, each runs as it would alone.
    const results: QueryResult<unknown>[] = planned.every((step) => step.kind === 'read')
      ? await Promise.all(planned.map((step) => runOne(step)))
      : (ctx.runBatchDirectly?.(ctx.db, planned) ??
        (await ctx.db.transaction().execute(async (trx) => {
          const done: QueryResult<unknown>[] = [];
          for (const step of planned)
            done.push(await trx.executeQuery(CompiledQuery.raw(step.sql, [...step.parameters])));
          return done;
        })));
    return planned.map((step, i) => step.result(results[i]!.rows as Rows)) as BatchResults<T>;
  };
  adopters.set(batch, (stores) => (own = stores));
  return batch;
}

/**
 * The stores of the storage a batch was called on, when any of them is not this adapter's own
 * (a storage composed of this adapter's stores and another's); `undefined` when all are its own.
 */
function foreignStores(
  on: Partial<BatchStores> | undefined,
  own: BatchStores | undefined,
): BatchStores | undefined {
  if (own === undefined || on?.ephemeral === undefined || on.tokens === undefined) return undefined;
  const { ephemeral, tokens, clients = own.clients, grants = own.grants } = on;
  const same =
    ephemeral === own.ephemeral && tokens === own.tokens && clients === own.clients && grants === own.grants;
  return same ? undefined : { ephemeral, tokens, clients, grants };
}

const adopters = new WeakMap<object, (stores: BatchStores) => void>();

/**
 * Tells the batch of an adapter which stores are its own, once the adapter is built (the stores
 * the caller sees are wrapped, see faults.ts). A batch called on a storage with other stores
 * runs the operations one by one through those.
 *
 * @internal
 */
export function adoptStores(storage: Pick<Storage, 'batch'> & BatchStores, raw: Storage['batch']): void {
  if (raw !== undefined) {
    const { ephemeral, tokens, clients, grants } = storage;
    adopters.get(raw)?.({ ephemeral, tokens, clients, grants });
  }
}
