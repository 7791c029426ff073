import type { Request } from 'express';
import { OAuthError } from '../../errors/oauth-error.js';
import { rawQuery } from '../../http/params.js';
import type { CallbackContext } from './callback.js';
import type { ConfiguredProvider } from '../../config/server.js';
import { findProvider } from '../../login/providers.js';
import { runLogin } from './run-login.js';
import { isPagePurpose, type PagePurpose } from '../shared/login-links.js';

export interface StartContext extends CallbackContext {
  provider: ConfiguredProvider;
}

/**
 * Step: the provider to log in at, named by `openid_identifier` in the query, and only there: it
 * must be one the operator configured, whatever the login strategy (a host's own, passport-openid
 * say, would otherwise contact any identifier a visitor types). The login is bound to the
 * authorization in progress, or is for a page (the authorized applications, the developer page).
 */
export function chooseProvider(ctx: StartContext): void {
  const query = new URLSearchParams(rawQuery(ctx.req.originalUrl));
  const identifiers = query.getAll('openid_identifier');
  const [only, ...more] = identifiers;
  const provider = only === undefined ? undefined : findProvider(ctx.server, only);
  if (provider === undefined || more.length > 0 || provider.identifier !== only) {
    throw new OAuthError('invalid_request', 'This OpenID provider is not accepted here.', {
      redirectable: false,
    });
  }
  const { pending } = ctx.session!.state;
  // A pending authorization of this browser keeps precedence over a sign-in for a page.
  const named = query.getAll('for').join();
  const loginFor = pending?.id ?? (isPagePurpose(named) ? named : undefined);
  if (loginFor === undefined) {
    throw new OAuthError(
      'invalid_request',
      'There is no sign-in in progress in this browser. Return to the application and start again.',
      { redirectable: false },
    );
  }
  ctx.provider = provider;
  ctx.purpose = pending ?? (loginFor as PagePurpose);
  ctx.session!.write().loginFor = loginFor;
}

/**
 * Step: the login strategy sends the browser to the provider. The strategy sees the checked
 * identifier and nothing else, whatever a body parser of the host put in `req.body`.
 */
export async function startAtProvider(ctx: StartContext): Promise<void> {
  const identifier = ctx.provider.identifier;
  const only = { openid_identifier: identifier };
  const view = Object.create(ctx.req, { query: { value: only }, body: { value: only } }) as Request;
  const identity = await runLogin(ctx, view, identifier);
  // A strategy that knows the user at once (a host's own login, say) signs in without a redirect.
  if (identity !== undefined) ctx.identity = identity;
}
