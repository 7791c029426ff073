import type { Kysely } from 'kysely';
import type { PrepareStatement } from './prepared.js';
import type { Database } from './schema.js';

export type SqlDialectName = 'postgres' | 'sqlite';

/**
 * What every store of the SQL adapter is built over.
 *
 * @internal
 */
export interface SqlContext {
  /** The Kysely instance, in the adapter's PostgreSQL schema if it has one. */
  db: Kysely<Database>;
  postgres: boolean;
  /** Prepares a statement of the request path (see prepared.ts). */
  prepare: PrepareStatement;
}
