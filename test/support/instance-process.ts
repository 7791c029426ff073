/**
 * One app instance as its own process, for the tests that need several instances on one database
 * or need to kill one. Configured by environment: DATABASE_URL, BASE_URL (what every instance
 * calls itself, as behind one load balancer), PROVIDERS (JSON), SESSION_SECRET. Prints
 * `{"port":N}` on stdout once listening on 127.0.0.1.
 */
import express from 'express';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  authorizeRouter,
  bearerOf,
  connectStorage,
  createAuthorizationServer,
  discoveryRouter,
  requireBearer,
  tokenRouter,
} from '../../src/index.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`instance-process: ${name} is not set`);
  return value;
};

const storage = await connectStorage(env('DATABASE_URL'), { migrate: true });
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

const http = createServer(app);
http.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (http.address() as AddressInfo).port })}\n`);
});
