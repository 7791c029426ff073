import type { ProviderChoice } from '../../pages/types.js';
import type { AuthorizationServer } from '../../server.js';

/**
 * The URL of the login route for one configured provider; `for: 'applications'` signs in for the
 * authorized-applications page rather than for a pending authorization.
 */
export function loginUrl(server: AuthorizationServer, identifier: string, purpose?: 'applications'): string {
  const query = new URLSearchParams({ openid_identifier: identifier });
  if (purpose) query.set('for', purpose);
  return `${server.urls.login}?${query}`;
}

/** The selection page's buttons: every configured provider, in order, with its login URL. */
export function providerChoices(server: AuthorizationServer, purpose?: 'applications'): ProviderChoice[] {
  return server.options.providers.map((p) => ({
    name: p.name,
    loginUrl: loginUrl(server, p.identifier, purpose),
    ...(p.icon === undefined ? {} : { icon: p.icon }),
  }));
}
