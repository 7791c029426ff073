import { generateSecret } from '../../crypto/secrets.js';
import type { Context } from './pipeline.js';
import type { ProviderChoice, SignOutForm } from '../../pages/types.js';
import type { AuthorizationServer } from '../../config/server.js';

/**
 * A page a member signs in for, rather than for a pending authorization: the authorized
 * applications, or the developer page.
 */
export type PagePurpose = 'applications' | 'developers';

/** Whether `value` (a session's `loginFor`, a `for` parameter) names a {@link PagePurpose}. */
export function isPagePurpose(value: unknown): value is PagePurpose {
  return value === 'applications' || value === 'developers';
}

/** Where a sign-in for `purpose` goes back to. */
export function pageUrl(server: AuthorizationServer, purpose: PagePurpose): string {
  return purpose === 'applications' ? server.urls.applications : server.urls.developers;
}

/**
 * The URL of the login route for one configured provider; `for` a {@link PagePurpose} signs in
 * for that page rather than for a pending authorization.
 */
export function loginUrl(server: AuthorizationServer, identifier: string, purpose?: PagePurpose): string {
  const query = new URLSearchParams({ openid_identifier: identifier });
  if (purpose) query.set('for', purpose);
  return `${server.urls.login}?${query}`;
}

/** The selection page's buttons: every configured provider, in order, with its login URL. */
export function providerChoices(server: AuthorizationServer, purpose?: PagePurpose): ProviderChoice[] {
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
