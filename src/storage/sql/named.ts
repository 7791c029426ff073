import { createHash } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient } from 'kysely';

/** The SQL texts a {@link namingStatements} pool runs as named (server-side prepared) statements. */
export interface StatementNames {
  /** Runs `sql` as a named statement from now on. */
  add(sql: string): void;
}

/** The part of a `pg` client used besides Kysely's interface: a query given as a config object. */
interface PgClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<unknown>;
}

/**
 * A `pg` pool as Kysely's PostgresDialect sees it, whose clients run the SQL texts added to the
 * returned {@link StatementNames} as named statements (`pg`'s `name` option): each connection
 * has the server parse and plan such a statement once, then only binds and executes it. Without a
 * name, PostgreSQL parses and plans every query anew, which costs more than running a primary-key
 * lookup. Any other SQL (migrations, transactions' `begin`, dynamically shaped queries) runs as
 * before.
 *
 * The name is a hash of the text, so two adapters sharing a pool agree on it. The named queries
 * list their columns (no `*`), so a migration adding a column does not invalidate a statement
 * other instances have prepared ("cached plan must not change result type").
 */
export function namingStatements(pool: PostgresPool): { pool: PostgresPool; names: StatementNames } {
  const names = new Map<string, string>();
  // Kysely keeps its connection per client object: one wrapper per pg client.
  const wrappers = new WeakMap<PostgresPoolClient, PostgresPoolClient>();
  const wrap = (client: PostgresPoolClient): PostgresPoolClient => ({
    query: ((sql: string, parameters: readonly unknown[]) => {
      const name = typeof sql === 'string' ? names.get(sql) : undefined;
      if (name === undefined) return client.query(sql, parameters);
      return (client as unknown as PgClient).query({ name, text: sql, values: parameters as unknown[] });
    }) as PostgresPoolClient['query'],
    release: () => client.release(),
  });
  return {
    pool: {
      async connect() {
        const client = await pool.connect();
        let wrapper = wrappers.get(client);
        if (wrapper === undefined) {
          wrapper = wrap(client);
          wrappers.set(client, wrapper);
        }
        return wrapper;
      },
      end: () => pool.end(),
    },
    names: {
      add(sql) {
        if (!names.has(sql))
          names.set(sql, `oob_${createHash('sha256').update(sql).digest('base64url').slice(0, 40)}`);
      },
    },
  };
}
