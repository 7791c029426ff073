import { createHash } from 'node:crypto';
import { StorageUnavailableError } from '../../errors/storage-unavailable.js';
import type { EphemeralCounter, EphemeralStore } from '../types.js';

/**
 * The commands {@link redisEphemeralStore} sends, as node-redis (v5 and later) declares them. A
 * client (`createClient`), a cluster (`createCluster`) and a pool (`createClientPool`) all have
 * them, with RESP2 or RESP3. Declared here rather than imported from `redis`, so that this module
 * loads nothing from it and accepts whichever of those you pass.
 */
export interface RedisEphemeralClient {
  get(key: string): Promise<string | null>;
  set(
    key: string,
    value: string,
    options: { expiration: { type: 'PX'; value: number }; condition?: 'NX' },
  ): Promise<string | null>;
  getDel(key: string): Promise<string | null>;
  unlink(key: string): Promise<number>;
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** How {@link redisEphemeralStore} names its keys. */
export interface RedisEphemeralStoreOptions {
  /**
   * Prepended as is to every key, so that several apps (or test runs) can share one Redis; end it
   * with a separator. Default `'oauth:'`, giving keys such as `oauth:code:<hash>`.
   */
  keyPrefix?: string;
}

/*
 * INCR, then give the counter its window only if it has no expiry yet, which is only when INCR has
 * just created it: `set` and `add` always write an expiry. Returns the count and the milliseconds
 * left. A window already over when it starts leaves nothing behind.
 *   KEYS: the counter. ARGV: milliseconds until the end of a new window.
 */
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  ttl = tonumber(ARGV[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) else redis.call('DEL', KEYS[1]) end
end
return {count, ttl}
`;
const INCREMENT_SHA1 = createHash('sha1').update(INCREMENT).digest('hex');

/*
 * Compare and set: the new value replaces the old only if the old is the one expected. Returns 1
 * when it wrote, 0 otherwise. A script runs alone, so racing callers see one another's writes.
 *   KEYS: the entry. ARGV: the value expected, the new value, its milliseconds to live.
 */
const REPLACE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;
const REPLACE_SHA1 = createHash('sha1').update(REPLACE).digest('hex');

/**
 * The {@link EphemeralStore} on Redis (6.2 or later) with node-redis: codes, nonces, login
 * sessions, rate-limit counters and markers, shared by every app instance that uses the same
 * Redis. Each method is one command on one key, so each is atomic on its key, and a cluster
 * works too: `get` is `GET`, `set` `SET PX`, `add` `SET NX PX`, `take` `GETDEL`, `delete`
 * `UNLINK`, and `increment` and `replace` (compare and set) short Lua scripts (`EVALSHA`).
 *
 * Redis expires the keys itself (the time to live is `expiresAt - now`, from the library's
 * clock), so the store has no `prune`. Durable state (clients, users, grants, tokens) stays in
 * your database: keep the SQL adapter for it and replace only its `ephemeral`. The SQL adapter's
 * `prune` then cleans only its own tables (tokens, grants, and its now unused ephemeral table).
 *
 * Import it from `openid-oauth-bridge/redis`; `redis` is an optional peer dependency, loaded only
 * by your own `import { createClient } from 'redis'`.
 *
 * @example
 * import { createClient } from 'redis';
 * import { connectStorage, createAuthorizationServer } from 'openid-oauth-bridge';
 * import { redisEphemeralStore } from 'openid-oauth-bridge/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL })
 *   .on('error', (err) => console.error('Redis:', err)) // node-redis reconnects by itself
 *   .connect();
 * const sql = await connectStorage(process.env.DATABASE_URL ?? 'postgres://localhost/oauth');
 * // The SQL adapter with its ephemeral store replaced, composed explicitly.
 * const storage = composeStorage(sql, { ephemeral: redisEphemeralStore(redis) });
 * const server = createAuthorizationServer({ storage, ... });
 */
export function redisEphemeralStore(
  client: RedisEphemeralClient,
  options: RedisEphemeralStoreOptions = {},
): EphemeralStore {
  const prefix = options.keyPrefix ?? 'oauth:';
  /** Milliseconds to live, rounded up so that a fraction of one still counts. */
  const ttl = (expiresAt: number, now: number) => Math.ceil(expiresAt - now);

  /** Runs a script by its hash; Redis caches scripts per node and loses them on a restart or SCRIPT FLUSH: then its text. */
  const script = (text: string, sha1: string, call: { keys: string[]; arguments: string[] }) =>
    client.evalSha(sha1, call).catch((err: unknown) => {
      if (err instanceof Error && err.message.startsWith('NOSCRIPT')) return client.eval(text, call);
      throw err;
    });

  async function increment(key: string, expiresAt: number, now: number): Promise<EphemeralCounter> {
    const call = { keys: [prefix + key], arguments: [String(ttl(expiresAt, now))] };
    const reply = await script(INCREMENT, INCREMENT_SHA1, call);
    const [count, left] = Array.isArray(reply) ? (reply as unknown[]) : [];
    if (typeof count !== 'number' || typeof left !== 'number') {
      throw new Error(`redisEphemeralStore: unexpected reply to the increment script: ${String(reply)}`);
    }
    return { count, expiresAt: now + left };
  }

  return guardRedisFaults({
    async get(key) {
      return client.get(prefix + key);
    },
    async set(key, value, expiresAt, now) {
      const left = ttl(expiresAt, now);
      // An entry already expired is absent: the value it replaces must go all the same.
      if (left <= 0) await client.unlink(prefix + key);
      else await client.set(prefix + key, value, { expiration: { type: 'PX', value: left } });
    },
    async add(key, value, expiresAt, now) {
      // Even an entry that expires at once has exactly one winner: it lives 1 ms.
      const left = Math.max(1, ttl(expiresAt, now));
      const reply = await client.set(prefix + key, value, {
        expiration: { type: 'PX', value: left },
        condition: 'NX',
      });
      return reply !== null;
    },
    async take(key) {
      return client.getDel(prefix + key);
    },
    async replace(key, expected, value, expiresAt, now) {
      // Written with at least 1 ms to live, as `add`: the caller that won must be told so.
      const left = String(Math.max(1, ttl(expiresAt, now)));
      const call = { keys: [prefix + key], arguments: [expected, value, left] };
      return (await script(REPLACE, REPLACE_SHA1, call)) === 1;
    },
    increment,
    async delete(key) {
      await client.unlink(prefix + key);
    },
  });
}

/** node-redis errors that mean Redis cannot answer now, rather than a bug. */
const UNAVAILABLE_NAMES = new Set([
  'ClientClosedError',
  'ClientOfflineError',
  'ConnectionTimeoutError',
  'SocketClosedUnexpectedlyError',
  'SocketTimeoutError',
  'ReconnectStrategyError',
  'TimeoutError',
  'AbortError',
]);
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);
/** Server replies of a node that is loading, failing over or out of memory. */
const UNAVAILABLE_REPLIES = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|OOM)\b/;

function unavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code;
  return (
    // node-redis leaves `name` as 'Error' on some of its classes: the class name tells.
    UNAVAILABLE_NAMES.has(err.name) ||
    UNAVAILABLE_NAMES.has(err.constructor.name) ||
    (code !== undefined && UNAVAILABLE_CODES.has(code)) ||
    UNAVAILABLE_REPLIES.test(err.message)
  );
}

/**
 * Rethrows what means Redis cannot answer now as a `StorageUnavailableError`, which the endpoints
 * answer with 503 and `Retry-After` (and `requireBearer` never with 401).
 */
function guardRedisFaults(store: EphemeralStore): EphemeralStore {
  const guarded = {} as Record<string, unknown>;
  for (const [name, method] of Object.entries(store) as [
    string,
    (...args: unknown[]) => Promise<unknown>,
  ][]) {
    guarded[name] = (...args: unknown[]) =>
      method(...args).catch((err: unknown) => {
        if (unavailable(err)) throw new StorageUnavailableError('Redis is unavailable.', { cause: err });
        throw err;
      });
  }
  return guarded as unknown as EphemeralStore;
}
