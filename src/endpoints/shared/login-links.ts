import { generateSecret } from '../../crypto/secrets.js';
import type { Context } from './pipeline.js';
import type { ProviderChoice, SignOutForm } from '../../pages/types.js';
import type { AuthorizationServer } from '../../config/server.js';

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

/**
 * The sign-out form of a page shown to a signed-in user, with the session's CSRF token (created
 * here if the session has none yet). `switch`: the authorization in progress is kept and resumes
 * at the provider selection.
 */
export function signOutForm(ctx: Context, then: 'switch' | 'done' | 'end-session'): SignOutForm {
  const session = ctx.session!;
  const csrf = session.state.logoutCsrf ?? (session.write().logoutCsrf = generateSecret());
  return { action: ctx.server.urls.logout, fields: { csrf, then } };
}

/** A post-logout redirect URI (OpenID Connect RP-initiated logout) with the relying party's `state`. */
export function withState(target: { redirectUri: string; state?: string }): string {
  if (target.state === undefined) return target.redirectUri;
  const url = new URL(target.redirectUri);
  url.searchParams.append('state', target.state);
  return url.href;
}
