import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { introspectionRouter, revocationRouter } from '../../src/endpoints/routers.js';
import type { IntrospectionRouterOptions } from '../../src/endpoints/introspection/endpoint.js';
import { connectStorage, memoryStorage, type ServerEvent, type Storage } from '../../src/index.js';
import type { TestApp } from './app.js';
import { dropSchema, postgresAvailability, postgresUrlFor, uniqueSchema } from './databases.js';
import { exchangeCode, obtainCode } from './flow.js';

/**
 * Mounts the revocation and introspection endpoints on a test app, after its other routers (the
 * test app has no catch-all, so routes added later are reached).
 */
export function mountClientEndpoints(t: TestApp, introspection: IntrospectionRouterOptions = {}): void {
  t.app.use(revocationRouter(t.server), introspectionRouter(t.server, introspection));
}

/** An HTTP Basic header as RFC 6749 2.3.1 builds it: id and secret form-encoded, then joined. */
export function basicAuth(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/** Runs the code flow and exchanges the code: resolves the token response. */
export async function obtainTokens(t: TestApp, extra: Record<string, string> = {}, user = 'alice') {
  const { code } = await obtainCode(t, extra, user);
  const res = await exchangeCode(t, code);
  expect(res.status).toBe(200);
  return res.body as { access_token: string; refresh_token: string; scope?: string };
}

/** A refresh at the token endpoint with the code client's secret in the body. */
export function refreshWith(t: TestApp, refreshToken: string) {
  return t.agent.post('/oauth/token').type('form').send({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: t.codeClient.clientId,
    client_secret: t.codeClient.clientSecret,
    redirect_uri: 'https://client.example/cb',
  });
}

/** `GET /v1/realms` with an access token. */
export function callRealms(t: TestApp, accessToken: string) {
  return t.agent.get('/v1/realms').set('Authorization', `Bearer ${accessToken}`);
}

/** A form POST to one of the client-authenticated endpoints, as the code client by default. */
export function postAs(
  t: TestApp,
  path: '/oauth/revoke' | '/oauth/introspect',
  body: Record<string, string>,
  client: { clientId: string; clientSecret: string } = t.codeClient,
) {
  return t.agent
    .post(path)
    .type('form')
    .send({ client_id: client.clientId, client_secret: client.clientSecret, ...body });
}

/** Every event the server reports, in order. */
export function recordEvents(t: TestApp): ServerEvent[] {
  const events: ServerEvent[] = [];
  t.server.events.on('*', (event) => void events.push(event));
  return events;
}

/** A storage engine to run a suite on; `skip` says why it cannot run here. */
export interface Engine {
  name: string;
  skip: string | null;
  open(): Promise<{ storage: Storage; dispose(): Promise<void> }>;
}

/**
 * The memory adapter, SQLite in a temporary file and PostgreSQL in a schema of its own. A missing
 * PostgreSQL is reported in the test names, and fails the run when `CI` is set.
 */
export async function storageEngines(): Promise<Engine[]> {
  const postgres = await postgresAvailability();
  return [
    {
      name: 'memory',
      skip: null,
      open: async () => ({ storage: memoryStorage(), dispose: async () => {} }),
    },
    {
      name: 'SQLite',
      skip: null,
      async open() {
        const dir = mkdtempSync(join(tmpdir(), 'oob-endpoints-'));
        const storage = await connectStorage(`sqlite:${join(dir, 'oauth.db')}`, { migrate: true });
        return {
          storage,
          async dispose() {
            await storage.close();
            rmSync(dir, { recursive: true, force: true });
          },
        };
      },
    },
    {
      name: 'PostgreSQL',
      skip: postgres.ok ? null : `NOT TESTED: ${postgres.reason}`,
      async open() {
        const schema = uniqueSchema('endpoints');
        const storage = await connectStorage(postgresUrlFor(schema), { migrate: true });
        return {
          storage,
          async dispose() {
            await storage.close();
            await dropSchema(schema);
          },
        };
      },
    },
  ];
}
