/**
 * Several instances of one app behind a load balancer: clients, users, grants and tokens in
 * PostgreSQL, codes, login sessions, nonces and rate-limit counters in Redis. Run it from a clone,
 * with both servers up:
 *
 *   DATABASE_URL=postgres://localhost/oauth REDIS_URL=redis://localhost:6379 \
 *     npx tsx --tsconfig examples/tsconfig.json examples/multi-instance.ts
 *
 * PORT (default 3000) is the load balancer, which sends each request to the next instance in
 * turn: a login begun on one instance finishes on another, with no sticky sessions. Every instance
 * has its own connections, as separate processes or machines would, and is told the same
 * `baseUrl` (the balancer's), `session.secret` and providers. Users log in at a development OpenID
 * provider started beside them (any user name, no password). Ctrl-C stops everything.
 */
import { randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import {
  ClientIdTakenError,
  bearerOf,
  closeGracefully,
  createAuthorizationServer,
  oauthRouter,
  registerClient,
  requireBearer,
  type ProviderOptions,
} from 'openid-oauth-bridge';
import { startDevelopmentProvider } from 'openid-oauth-bridge/testing';
import { openStorage } from './redis-storage.js';

const INSTANCES = 2;
const port = Number(process.env.PORT ?? 3000);
const baseUrl = `http://localhost:${port}`;
const databaseUrl = required('DATABASE_URL');
const redisUrl = required('REDIS_URL');
// Every instance must sign and check the session cookie with the same secret.
const sessionSecret = process.env.SESSION_SECRET ?? randomBytes(32).toString('base64url');

const op = await startDevelopmentProvider({ users: ['alice', 'bob'] });
const providers: ProviderOptions[] = [{ name: 'Development provider', identifier: op.identifier }];

const instances: {
  http: Server;
  port: number;
  server: ReturnType<typeof createAuthorizationServer>;
  close: () => Promise<void>;
}[] = [];
for (let n = 1; n <= INSTANCES; n++) {
  const { storage, close } = await openStorage(databaseUrl, redisUrl); // migrates: safe at once
  const server = createAuthorizationServer({
    baseUrl,
    storage,
    providers,
    session: { secret: sessionSecret },
    scopes: { 'realms:read': 'See the list of your realms' },
  });
  const app = express();
  app.use((_req, res, next) => {
    res.set('X-Instance', String(n)); // to see the balancer at work
    next();
  });
  app.use(oauthRouter(server));
  app.get('/v1/realms', requireBearer(server, { scopes: ['realms:read'] }), (_req, res) => {
    res.json({ user: bearerOf(res).userId, realms: ['Ravenholm'], instance: n });
  });
  const http = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => http.once('listening', resolve));
  instances.push({ http, port: (http.address() as AddressInfo).port, server, close });
}

// Registered once for all instances; the next start keeps it.
const { storage: admin, close: closeAdmin } = await openStorage(databaseUrl, redisUrl);
try {
  const { clientSecret } = await registerClient(admin, {
    clientId: 'multi-instance-demo',
    applicationName: 'Multi-instance demo',
    redirectUri: 'http://127.0.0.1:8080/callback',
    scopes: ['realms:read'],
  });
  console.log(`client multi-instance-demo registered, secret (shown once): ${clientSecret}`);
} catch (err) {
  if (!(err instanceof ClientIdTakenError)) throw err;
}
await closeAdmin();

// The load balancer: round robin, nothing sticky.
let turn = 0;
const balancer = createServer((req, res) => {
  const target = instances[turn++ % instances.length]!;
  const upstream = request(
    { host: '127.0.0.1', port: target.port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.writeHead(502).end());
  req.pipe(upstream);
});
balancer.listen(port, '127.0.0.1', () => {
  console.log(`load balancer on ${baseUrl}, ${INSTANCES} instances; OpenID provider ${op.url}`);
  console.log(
    `try ${baseUrl}/oauth/authorize?response_type=code&client_id=multi-instance-demo` +
      `&redirect_uri=${encodeURIComponent('http://127.0.0.1:8080/callback')}&state=xyz`,
  );
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    balancer.close();
    for (const instance of instances) {
      // The instance's per-app usage counts are written once its last request has finished.
      await closeGracefully(instance.http, { server: instance.server, timeoutMs: 5000 });
      await instance.close();
    }
    await op.close();
  });
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set: this example needs PostgreSQL and Redis (see the comment at the top)`);
    process.exit(2);
  }
  return value;
}
