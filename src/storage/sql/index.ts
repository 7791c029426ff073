export type { SqlStorage, SqlDialectName } from './adapter.js';
export { sqlStorage, type SqlDatabaseHandle } from './handle.js';
export { connectStorage, type ConnectStorageOptions } from './connect.js';
export { migrations } from './migrations.js';
