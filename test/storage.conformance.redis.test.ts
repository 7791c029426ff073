import { randomUUID } from 'node:crypto';
import { createClient, type RedisClientType } from 'redis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { redisStorage } from '../examples/redis-storage.js';
import { describeStorageConformance } from '../src/testing/index.js';

/*
 * The conformance kit against the example Redis adapter, on a real Redis (REDIS_URL, default
 * 127.0.0.1:6379). Keys live under a prefix unique to this run and are deleted afterwards.
 */

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `oob-conformance-${randomUUID()}`;

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
  for await (const keys of client.scanIterator({ MATCH: `${keyPrefix}:*`, COUNT: 1000 })) {
    if (keys.length > 0) await client.unlink(keys);
  }
}

const redis = await connect();

if (redis instanceof Error) {
  const reason = `Redis is unreachable at ${url} (${redis.message || redis.name})`;
  console.warn(`\nstorage conformance (redis): ${reason}. Start Redis or set REDIS_URL.\n`);
  if (process.env.CI) {
    describe('storage conformance: redis', () => {
      it('needs a reachable Redis when CI is set', () => {
        throw new Error(`${reason}. CI is set, so a missing Redis fails instead of skipping.`);
      });
    });
  } else {
    describe.skip(`storage conformance: redis, skipped: ${reason}`, () => {
      it('runs the conformance kit against examples/redis-storage.ts', () => undefined);
    });
  }
} else {
  describeStorageConformance(
    { describe, it, beforeAll, afterAll },
    {
      name: `redis (examples/redis-storage.ts at ${url})`,
      createStorage: () => redisStorage(redis, { keyPrefix }),
      close: async () => {
        await deleteRunKeys(redis);
        await redis.close();
      },
      absent: ['prune'],
    },
  );
}
