/**
 * The soak's app instance: test/support/instance-process.ts's app (every endpoint, `GET
 * /v1/realms` behind requireBearer, `GET /__stats` with EXPOSE_STATS, closeGracefully on SIGTERM),
 * with the ephemeral store on Redis when REDIS_URL is set: `redisEphemeralStore` from
 * `openid-oauth-bridge/redis` beside the SQL adapter's durable stores, as docs/storage.md
 * composes them (REDIS_PREFIX, default `oauth:`, keeps runs apart). Prints `{"port":N}` once
 * listening on 127.0.0.1, and `{"closed":{...}}` after SIGTERM.
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
import { redisEphemeralStore } from '../../src/storage/redis/index.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`soak instance: ${name} is not set`);
  return value;
};

const sql = await connectStorage(env('DATABASE_URL'), {
  migrate: true,
  ...(process.env.APPLICATION_NAME ? { applicationName: process.env.APPLICATION_NAME } : {}),
});
const redis = process.env.REDIS_URL
  ? await createClient({ url: process.env.REDIS_URL })
      .on('error', (err: unknown) => console.error('Redis:', err))
      .connect()
  : undefined;
const storage = redis
  ? { ...sql, ephemeral: redisEphemeralStore(redis, { keyPrefix: process.env.REDIS_PREFIX ?? 'oauth:' }) }
  : sql;
const both = { close: async () => void (await Promise.all([sql.close(), redis?.close()])) };

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
  void closeGracefully(http, { storage: both, timeoutMs: 10_000 }).then((result) => {
    process.stdout.write(`${JSON.stringify({ closed: { ...result, ms: Date.now() - started } })}\n`);
    setTimeout(() => console.error('still running:', process.getActiveResourcesInfo()), 2000).unref();
  });
});
