import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { developmentProvider } from './router.js';
import { claimedIdPath, shapes, type ProviderShape } from './shapes.js';

/** A running development provider. */
export interface RunningDevelopmentProvider {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** The OP identifier to configure as a provider: `${url}/` (`${url}/openid` for Steam's shape). */
  identifier: string;
  /** The OP endpoint: `${url}/endpoint` (Steam's shape: `/openid/login`; Launchpad's: `/+openid`). */
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
 * const steamLike = await startDevelopmentProvider({ shape: 'steam' });
 * // providers: [steam({ baseUrl: steamLike.url })]: claimed ids and account keys as Steam's
 * await op.close();
 */
export async function startDevelopmentProvider(
  options: {
    port?: number;
    users?: string[];
    shape?: ProviderShape;
    /** The teams of each user name, for `shape: 'launchpad'` (see `developmentProvider`). */
    teams?: Readonly<Record<string, readonly string[]>>;
  } = {},
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
  const shape = shapes[options.shape ?? 'generic'];
  app.use(
    developmentProvider({ baseUrl: url, users: options.users, shape: options.shape, teams: options.teams }),
  );
  return {
    url,
    identifier: `${url}${shape.identifierPath}`,
    endpoint: `${url}${shape.endpointPath}`,
    userUrl: (name) => `${url}${claimedIdPath(shape, encodeURIComponent(name))}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
