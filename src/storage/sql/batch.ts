import { CompiledQuery, type QueryResult } from 'kysely';
import { runEach } from '../batch.js';
import type { BatchOperation, BatchResults, Storage } from '../types.js';
import type { SqlContext } from './context.js';
import { preparePutIfAbsent, prepareTake } from './ephemeral.js';
import type { BatchStep } from './prepared.js';
import { scopeText } from './rows.js';
import { prepareTokenUpsert } from './tokens.js';

/**
 * {@link Storage.batch} for the SQL adapter: the very statements of `tokens.save`,
 * `ephemeral.take` and `ephemeral.add`, run as one transaction.
 *
 * - SQLite: in one `better-sqlite3` transaction, synchronously when the connection is free (one
 *   commit to the WAL for all of them), else in a Kysely transaction.
 * - PostgreSQL: in one statement, one round trip, each operation a data-modifying CTE. They all
 *   see one snapshot, which is why the contract keeps two operations of a batch off the same key
 *   or token. A `take` in a CTE is still a `DELETE … RETURNING`, and an `add` still an upsert
 *   that writes only over an expired row, so their guarantees under races are those of the
 *   statements alone. The statement's text depends only on the sequence of operations: it is
 *   built once per sequence and runs as a named prepared statement.
 *
 * @internal
 */
export function sqlBatch(ctx: SqlContext): NonNullable<Storage['batch']> {
  let own: Pick<Storage, 'ephemeral' | 'tokens'> | undefined;
  const saveToken = prepareTokenUpsert(ctx);
  const take = prepareTake(ctx);
  const add = preparePutIfAbsent(ctx);

  const stepOf = (operation: BatchOperation): BatchStep => {
    switch (operation.op) {
      case 'tokens.save':
        return {
          sql: saveToken.sql,
          parameters: saveToken.bind({ ...operation.token, scopes: scopeText(operation.token.scopes) }),
        };
      case 'ephemeral.take':
        return { sql: take.sql, parameters: take.bind(operation) };
      case 'ephemeral.add':
        return { sql: add.sql, parameters: add.bind(operation) };
    }
  };

  /** PostgreSQL: the one statement of a sequence of operations, by their names joined. */
  const statements = new Map<string, string>();
  const statementOf = (operations: readonly BatchOperation[], steps: readonly BatchStep[]): string => {
    const shape = operations.map((operation) => operation.op).join(',');
    let text = statements.get(shape);
    if (text === undefined) {
      const ctes: string[] = [];
      const columns: string[] = [];
      let offset = 0;
      steps.forEach((step, i) => {
        const shift = offset;
        ctes.push(`"o${i}" as (${step.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + shift}`)})`);
        offset += step.parameters.length;
        const op = operations[i]!.op;
        if (op === 'ephemeral.take') columns.push(`(select "value" from "o${i}") as "r${i}"`);
        if (op === 'ephemeral.add') columns.push(`exists (select 1 from "o${i}") as "r${i}"`);
      });
      text = `with ${ctes.join(', ')} select ${columns.length > 0 ? columns.join(', ') : '1 as "none"'}`;
      statements.set(shape, text);
      ctx.nameStatement(text);
    }
    return text;
  };

  const resultOf = (operation: BatchOperation, rows: readonly unknown[]): unknown => {
    switch (operation.op) {
      case 'tokens.save':
        return undefined;
      case 'ephemeral.take':
        return (rows[0] as { value?: string } | undefined)?.value ?? null;
      case 'ephemeral.add':
        return rows.length > 0;
    }
  };

  const batch = async function batch<const T extends readonly BatchOperation[]>(
    this: Partial<Pick<Storage, 'ephemeral' | 'tokens'>> | undefined,
    operations: T,
  ): Promise<BatchResults<T>> {
    // A storage assembled from this adapter's stores and another's (`{ ...sql, ephemeral: redis }`)
    // carries this method along: its operations go to that storage's own stores, one by one.
    if (
      own !== undefined &&
      this?.ephemeral !== undefined &&
      this.tokens !== undefined &&
      (this.ephemeral !== own.ephemeral || this.tokens !== own.tokens)
    ) {
      return runEach({ ephemeral: this.ephemeral, tokens: this.tokens }, operations);
    }
    if (operations.length === 0) return [] as unknown as BatchResults<T>;
    const steps = operations.map(stepOf);
    if (ctx.postgres) {
      const text = statementOf(operations, steps);
      const { rows } = await ctx.db.executeQuery<Record<string, unknown>>(
        CompiledQuery.raw(
          text,
          steps.flatMap((step) => step.parameters),
        ),
      );
      const row = rows[0] ?? {};
      return operations.map((operation, i) =>
        operation.op === 'tokens.save'
          ? undefined
          : operation.op === 'ephemeral.take'
            ? ((row[`r${i}`] as string | null | undefined) ?? null)
            : row[`r${i}`] === true,
      ) as BatchResults<T>;
    }
    const results: QueryResult<unknown>[] =
      ctx.runBatchDirectly?.(ctx.db, steps) ??
      (await ctx.db.transaction().execute(async (trx) => {
        const done: QueryResult<unknown>[] = [];
        for (const step of steps)
          done.push(await trx.executeQuery(CompiledQuery.raw(step.sql, [...step.parameters])));
        return done;
      }));
    return operations.map((operation, i) => resultOf(operation, results[i]!.rows)) as BatchResults<T>;
  };
  adopters.set(batch, (stores) => (own = stores));
  return batch;
}

const adopters = new WeakMap<object, (stores: Pick<Storage, 'ephemeral' | 'tokens'>) => void>();

/**
 * Tells the batch of an adapter which stores are its own, once the adapter is built (the stores
 * the caller sees are wrapped, see faults.ts). A batch called on a storage with other stores
 * runs the operations one by one through those.
 *
 * @internal
 */
export function adoptStores(
  storage: Pick<Storage, 'batch' | 'ephemeral' | 'tokens'>,
  raw: Storage['batch'],
): void {
  if (raw !== undefined) adopters.get(raw)?.({ ephemeral: storage.ephemeral, tokens: storage.tokens });
}
