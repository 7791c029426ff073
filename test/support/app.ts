import express, { type Express, type Response } from 'express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import supertest from 'supertest';
import { expect } from 'vitest';
import { applicationsRouter } from '../../src/endpoints/routers.js';
import {
  authorizeRouter,
  bearerOf,
  createAuthorizationServer,
  discoveryRouter,
  memoryStorage,
  registerClient,
  requireBearer,
  tokenRouter,
  type AuthorizationServer,
  type AuthorizationServerOptions,
  type OAuthErrorCode,
  type Storage,
} from '../../src/index.js';
import { startDevelopmentProvider } from '../../src/testing/index.js';

export const CODE_REDIRECT = 'https://client.example/cb';
export const IMPLICIT_REDIRECT = 'https://spa.example/app/';

export interface TestApp {
  app: Express;
  server: AuthorizationServer;
  storage: Storage;
  baseUrl: string;
  provider: Awaited<ReturnType<typeof startDevelopmentProvider>>;
  codeClient: { clientId: string; clientSecret: string };
  implicitClient: { clientId: string };
  /** A browser: keeps the auth server's cookies between requests. */
  agent: ReturnType<typeof supertest.agent>;
  close(): Promise<void>;
}

type Overrides = Partial<Omit<AuthorizationServerOptions, 'baseUrl' | 'storage'>> & { storage?: Storage };

/** What {@link createTestApp} takes: options, or a function of the base URL and provider that gives them. */
export type TestAppOptions = Overrides | ((baseUrl: string, providerIdentifier: string) => Overrides);

/**
 * A real app on 127.0.0.1 with the library mounted the way the README says, a development
 * OpenID provider on its own port, one code client and one implicit client.
 */
export async function createTestApp(
  overridesOrForBaseUrl: TestAppOptions = {},
  mount?: (app: Express) => void,
): Promise<TestApp> {
  const provider = await startDevelopmentProvider();
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  // A function receives the base URL and the development provider's identifier, for options that
  // must contain them (a strategy's return URL, a list of providers).
  const overrides =
    typeof overridesOrForBaseUrl === 'function'
      ? overridesOrForBaseUrl(baseUrl, provider.identifier)
      : overridesOrForBaseUrl;
  const storage = overrides.storage ?? memoryStorage();
  const { clientId, clientSecret } = await registerClient(storage, {
    clientId: 'code-client',
    applicationName: 'Photo Printer',
    redirectUri: CODE_REDIRECT,
    scopes: ['realms', 'profile'],
  });
  const implicitClient = await registerClient(storage, {
    clientId: 'implicit-client',
    applicationName: 'Single Page App',
    redirectUri: IMPLICIT_REDIRECT,
    grantType: 'implicit',
    scopes: ['realms'],
  });

  const server = createAuthorizationServer({
    providers: [{ name: 'Development provider', identifier: provider.identifier }],
    session: { secret: 'a test session secret that is long enough' },
    logger: { warn: () => {}, error: () => {} },
    ...overrides,
    baseUrl,
    storage,
  });
  const app = express();
  mount?.(app);
  app.use(discoveryRouter(server), authorizeRouter(server), tokenRouter(server), applicationsRouter(server));
  app.get('/v1/realms', requireBearer(server), (_req, res: Response) => {
    const caller = bearerOf(res);
    // A client's own token (client credentials) has no member, so no realms of its own.
    res.json(
      caller.userId === null
        ? { realms: [], client: caller.clientId, subject: caller.subject }
        : { realms: [`realm-of-${caller.userId}`] },
    );
  });
  http.on('request', app);

  return {
    app,
    server,
    storage,
    baseUrl,
    provider,
    codeClient: { clientId, clientSecret: clientSecret! },
    implicitClient,
    agent: supertest.agent(baseUrl),
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await provider.close();
    },
  };
}

/** A logger that keeps every line, for tests that check what is (and is not) logged. */
export function recordingLogger() {
  const lines: { level: 'warn' | 'error'; message: string; details?: Record<string, unknown> }[] = [];
  return {
    lines,
    warn: (message: string, details?: Record<string, unknown>) =>
      void lines.push({ level: 'warn', message, details }),
    error: (message: string, details?: Record<string, unknown>) =>
      void lines.push({ level: 'error', message, details }),
  };
}

/** Asserts an RFC 6749 5.2 JSON error. */
export function expectOAuthError(
  res: { status: number; body: unknown },
  code: OAuthErrorCode,
  status = 400,
): void {
  expect(res.body).toMatchObject({ error: code });
  expect(res.status).toBe(status);
}

/** The parameters of a redirect to a client, from the query (`code`) or the fragment (`token`). */
export function redirectParams(location: string): Record<string, string> {
  const url = new URL(location);
  const source = url.hash ? url.hash.slice(1) : url.search.slice(1);
  return Object.fromEntries(new URLSearchParams(source));
}
