/**
 * One app instance as its own process, for the tests that need several instances on one database
 * or need to kill one. Configured by environment: DATABASE_URL, BASE_URL (what every instance
 * calls itself, as behind one load balancer), PROVIDERS (JSON), SESSION_SECRET; optionally
 * APPLICATION_NAME (of its PostgreSQL connections), SLOW_ROUTE_MS (adds `GET /v1/slow`, a
 * protected route that answers after that long), EXPOSE_STATS (adds `GET /__stats`: memory after a
 * GC when run with --expose-gc, and CPU time) and INSTANCE_REDIS_URL (the ephemeral store on Redis,
 * `redisEphemeralStore` beside the SQL adapter's durable stores as docs/storage.md composes them;
 * INSTANCE_REDIS_PREFIX, default `oauth:`, keeps runs apart). Prints `{"port":N}` on stdout once listening
 * on 127.0.0.1.
 *
 * SIGTERM shuts it down with closeGracefully, as the README recommends, and prints
 * `{"closed":{...}}`; the process then ends on its own, or not at all if something still holds
 * the event loop (which the shutdown test would notice).
 */
import express from 'express';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'redis';
import {
  authorizeRouter,
  bearerOf,
  closeGracefully,
  connectStorage,
  createAuthorizationServer,
  discoveryRouter,
  requireBearer,
  tokenRouter,
} from '../../src/index.js';
import { composeStorage, redisEphemeralStore } from '../../src/storage/redis/index.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`instance-process: ${name} is not set`);
  return value;
};

const sql = await connectStorage(env('DATABASE_URL'), {
  migrate: true,
  ...(process.env.APPLICATION_NAME ? { applicationName: process.env.APPLICATION_NAME } : {}),
});
const redis = process.env.INSTANCE_REDIS_URL
  ? await createClient({ url: process.env.INSTANCE_REDIS_URL })
      .on('error', (err: unknown) => console.error('Redis:', err))
      .connect()
  : undefined;
const storage = redis
  ? composeStorage(sql, {
      ephemeral: redisEphemeralStore(redis, { keyPrefix: process.env.INSTANCE_REDIS_PREFIX ?? 'oauth:' }),
    })
  : sql;
/** What closeGracefully closes: the SQL pool, and the Redis client if there is one. */
const connections = { close: async () => void (await Promise.all([sql.close(), redis?.close()])) };
const server = createAuthorizationServer({
  baseUrl: env('BASE_URL'),
  storage,
  providers: JSON.parse(env('PROVIDERS')) as { name: string; identifier: string }[],
  session: { secret: env('SESSION_SECRET') },
  logger: { warn: () => {}, error: (message: string) => console.error(message) },
});
const app = express();
app.use(discoveryRouter(server), authorizeRouter(server), tokenRouter(server));
app.get('/v1/realms', requireBearer(server), (_req, res) => {
  res.json({ realms: [`realm-of-${bearerOf(res).userId}`] });
});

const slowMs = process.env.SLOW_ROUTE_MS;
if (slowMs !== undefined) {
  app.get('/v1/slow', requireBearer(server), async (_req, res) => {
    await new Promise((resolve) => setTimeout(resolve, Number(slowMs)));
    res.json({ slow: true, user: bearerOf(res).userId });
  });
}
if (process.env.EXPOSE_STATS) {
  app.get('/__stats', (_req, res) => {
    (globalThis as { gc?: () => void }).gc?.();
    res.json({ ...process.memoryUsage(), cpu: process.cpuUsage() });
  });
}

const http = createServer(app);
http.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (http.address() as AddressInfo).port })}\n`);
});

process.once('SIGTERM', () => {
  const started = Date.now();
  void closeGracefully(http, { storage: connections, timeoutMs: 10_000 }).then((result) => {
    process.stdout.write(`${JSON.stringify({ closed: { ...result, ms: Date.now() - started } })}\n`);
    // Does not keep the process alive; says what does, should something.
    setTimeout(() => console.error('still running:', process.getActiveResourcesInfo()), 2000).unref();
  });
});
