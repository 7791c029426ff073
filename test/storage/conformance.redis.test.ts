import { randomUUID } from 'node:crypto';
import { createClient, type RedisClientType } from 'redis';
import { StorageUnavailableError } from '../../src/errors/storage-unavailable.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  composeStorage,
  redisEphemeralStore,
  type RedisEphemeralClient,
} from '../../src/storage/redis/index.js';
import { connectStorage } from '../../src/index.js';
import { describeEphemeralStoreConformance, describeStorageConformance } from '../../src/testing/index.js';

/*
 * The ephemeral conformance kit against the shipped Redis store, on a real Redis (REDIS_URL,
 * default 127.0.0.1:6379). Keys live under a prefix unique to this run and are deleted afterwards.
 */

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `oob-conformance-${randomUUID()}:`;

/** A connected client, or why there is none. */
async function connect(): Promise<RedisClientType | Error> {
  const client: RedisClientType = createClient({
    url,
    socket: { connectTimeout: 3000, reconnectStrategy: false },
  });
  client.on('error', () => undefined); // connect() rejects with the same error
  return client.connect().then(
    () => client,
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  );
}

async function deleteRunKeys(client: RedisClientType): Promise<void> {
  for await (const keys of client.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 1000 })) {
    if (keys.length > 0) await client.unlink(keys);
  }
}

const redis = await connect();

if (redis instanceof Error) {
  const reason = `Redis is unreachable at ${url} (${redis.message || redis.name})`;
  console.warn(`\nstorage conformance (redis): ${reason}. Start Redis or set REDIS_URL.\n`);
  if (process.env.CI) {
    describe('ephemeral store conformance: redis', () => {
      it('needs a reachable Redis when CI is set', () => {
        throw new Error(`${reason}. CI is set, so a missing Redis fails instead of skipping.`);
      });
    });
  } else {
    describe.skip(`ephemeral store conformance: redis, skipped: ${reason}`, () => {
      it('runs the ephemeral conformance kit against redisEphemeralStore', () => undefined);
    });
  }
} else {
  describeEphemeralStoreConformance(
    { describe, it, beforeAll, afterAll },
    {
      name: `redis (redisEphemeralStore at ${url})`,
      createStore: () => redisEphemeralStore(redis, { keyPrefix }),
      absent: ['prune'],
    },
  );

  // The deployment the store is for: durable rows in SQL, ephemeral state in Redis, with the
  // library's rules, fault sweeps and races over both.
  describeStorageConformance(
    { describe, it, beforeAll, afterAll },
    {
      name: `SQLite durable + redis ephemeral (${url})`,
      createStorage: async () => {
        const sql = await connectStorage('sqlite::memory:', { migrate: true });
        // As docs/storage.md composes it: Redis expires its own entries, the SQL prune cleans the
        // SQL tables.
        return composeStorage(sql, {
          ephemeral: redisEphemeralStore(redis, { keyPrefix: `${keyPrefix}composed:` }),
        });
      },
      close: (storage) => storage.close(),
      absent: ['ephemeralPrune'],
    },
  );

  afterAll(async () => {
    await deleteRunKeys(redis);
    await redis.close();
  });

  describe('redisEphemeralStore: on Redis', () => {
    const store = redisEphemeralStore(redis, { keyPrefix });

    it('writes under the key prefix, with a native expiry', async () => {
      const now = Date.now();
      await store.set('code:x', 'v', now + 60_000, now);
      expect(await redis.get(`${keyPrefix}code:x`)).toBe('v');
      const ttl = await redis.pTTL(`${keyPrefix}code:x`);
      expect(ttl).toBeGreaterThan(59_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    });

    it('increment and replace send the script text when Redis does not have it cached (NOSCRIPT)', async () => {
      let evalShaCalls = 0;
      const forgetful: RedisEphemeralClient = {
        get: (key) => redis.get(key),
        set: (key, value, options) => redis.set(key, value, options),
        getDel: (key) => redis.getDel(key),
        unlink: (key) => redis.unlink(key),
        eval: (script, options) => redis.eval(script, options),
        evalSha: async () => {
          evalShaCalls++;
          throw new Error('NOSCRIPT No matching script. Please use EVAL.');
        },
      };
      const now = Date.now();
      const counter = await redisEphemeralStore(forgetful, { keyPrefix }).increment(
        'rate:x',
        now + 60_000,
        now,
      );
      expect(evalShaCalls).toBe(1);
      expect(counter).toEqual({ count: 1, expiresAt: now + 60_000 });
      // replace (the code exchange's commit point) the same way.
      const forgetfulStore = redisEphemeralStore(forgetful, { keyPrefix });
      await forgetfulStore.set('code:noscript', 'unused', now + 60_000, now);
      expect(await forgetfulStore.replace('code:noscript', 'unused', 'used', now + 60_000, now)).toBe(true);
      expect(evalShaCalls).toBe(2);
      expect(await redis.get(`${keyPrefix}code:noscript`)).toBe('used');
    });

    it('answers StorageUnavailableError (503 at the endpoints) once Redis cannot be reached', async () => {
      const gone = createClient({ url, socket: { connectTimeout: 3000, reconnectStrategy: false } });
      gone.on('error', () => undefined);
      await gone.connect();
      await gone.close();
      const failing = redisEphemeralStore(gone, { keyPrefix });
      const now = Date.now();
      for (const call of [
        () => failing.get('code:x', now),
        () => failing.add('nonce:x', '1', now + 1000, now),
        () => failing.increment('rate:x', now + 1000, now),
      ]) {
        const error = await call().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(StorageUnavailableError.is(error), String(error)).toBe(true);
      }
    });
  });
}
