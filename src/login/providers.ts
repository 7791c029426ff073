import type { AuthorizationServer, ConfiguredProvider } from '../config/server.js';

/**
 * The configured provider with exactly this identifier or name: the allow-list every route checks
 * before anything is contacted.
 */
export function findProvider(
  server: Pick<AuthorizationServer, 'options'>,
  identifierOrName: string,
): ConfiguredProvider | undefined {
  return server.options.providers.find(
    (p) => p.identifier === identifierOrName || p.name === identifierOrName,
  );
}
