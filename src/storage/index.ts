/**
 * `openid-oauth-bridge/storage`: what a storage adapter implements, and the parts of the built-in
 * ones an adapter or an app builds on. The stores of the contract, with their records (the whole,
 * `Storage`, and `ClientRecord` are in the main entry, where an app that mounts the server finds
 * them), the ephemeral store in memory to pair with durable stores of your own
 * ({@link memoryEphemeralStore}), and the SQL adapter over a database handle your app opened
 * ({@link sqlStorage}). See docs/custom-adapter.md.
 *
 * @packageDocumentation
 */
export type {
  EphemeralStore,
  ClientStore,
  ClientChanges,
  ClientListFilter,
  UserStore,
  UserRecord,
  GrantStore,
  GrantRecord,
  TokenStore,
  TokenRecord,
  FoundTokenRecord,
  PruneOptions,
  PruneResult,
} from './types.js';
export { memoryEphemeralStore } from './memory.js';
export { sqlStorage, type SqlDatabaseHandle } from './sql/handle.js';
export type { SqlStorage } from './sql/adapter.js';
