import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { developmentProvider } from './router.js';

/** A running development provider. */
export interface RunningDevelopmentProvider {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** The OP identifier to configure as a provider: `${url}/`. */
  identifier: string;
  /** The OP endpoint: `${url}/endpoint`. */
  endpoint: string;
  /** The claimed identifier of a user name. */
  userUrl(name: string): string;
  close(): Promise<void>;
}

/**
 * Starts a {@link developmentProvider} on its own HTTP server, bound to 127.0.0.1 only (it lets
 * anyone sign in as anyone). **For demos and tests only.**
 *
 * @example
 * const op = await startDevelopmentProvider({ users: ['alice'] });
 * // providers: [{ name: 'Development', identifier: op.identifier }]
 * await op.close();
 */
export async function startDevelopmentProvider(
  options: { port?: number; users?: string[] } = {},
): Promise<RunningDevelopmentProvider> {
  const app = express();
  app.disable('x-powered-by');
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Mounted once the port is known, since every URL the provider emits contains it.
  app.use(developmentProvider({ baseUrl: url, users: options.users }));
  return {
    url,
    identifier: `${url}/`,
    endpoint: `${url}/endpoint`,
    userUrl: (name) => `${url}/user/${encodeURIComponent(name)}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
