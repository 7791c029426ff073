/**
 * Durable rows in SQL, short-lived state in Redis. Clients, users, grants and tokens stay in
 * PostgreSQL (or SQLite) through the SQL adapter; authorization codes, OpenID nonces, login
 * sessions, rate-limit counters and markers go to Redis through `redisEphemeralStore`, which
 * replaces the adapter's `ephemeral` and nothing else.
 *
 * Redis expires its keys itself, so the Redis store has no `prune`; the SQL adapter's `prune`
 * (from a cron job or the CLI) then cleans only its own tables: tokens that can no longer work,
 * old revoked grants, and its own ephemeral table, which stays empty.
 *
 * @example
 * const { storage, close } = await openStorage(process.env.DATABASE_URL!, process.env.REDIS_URL!);
 * const server = createAuthorizationServer({ storage, ... });
 */
import { createClient } from 'redis';
// In your app: `from 'openid-oauth-bridge'` and `from 'openid-oauth-bridge/redis'`.
import { connectStorage, type Storage } from '../src/index.js';
import { composeStorage, redisEphemeralStore } from '../src/storage/redis/index.js';

export async function openStorage(
  databaseUrl: string,
  redisUrl: string,
): Promise<{ storage: Storage; close: () => Promise<void> }> {
  const redis = await createClient({ url: redisUrl })
    // node-redis reconnects by itself; without a listener, a lost connection would crash the process.
    .on('error', (err: unknown) => console.error('Redis:', err))
    .connect();
  const sql = await connectStorage(databaseUrl, { migrate: true });
  const storage = composeStorage(sql, { ephemeral: redisEphemeralStore(redis, { keyPrefix: 'oauth:' }) });
  return {
    storage,
    async close() {
      await sql.close();
      await redis.close();
    },
  };
}
