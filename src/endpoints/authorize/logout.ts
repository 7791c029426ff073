import type { Request, Response } from 'express';
import { generateSecret, safeEqual } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { formParams } from '../../http/params.js';
import type { SignOutForm } from '../../pages/types.js';
import type { AuthorizationServer } from '../../server.js';
import { readSessionState, writableSessionState } from '../../session/state.js';
import { checkSameOrigin } from './decision.js';

/**
 * The sign-out form of a page shown to a signed-in user, with the session's CSRF token (created
 * here if the session has none yet). `switchAccount`: the authorization in progress is kept and
 * resumes at the provider selection.
 */
export function signOutForm(server: AuthorizationServer, req: Request, then: 'switch' | 'done'): SignOutForm {
  const state = writableSessionState(req, server.clock());
  state.logoutCsrf ??= generateSecret();
  return { action: `${server.urls.base}/oauth/logout`, fields: { csrf: state.logoutCsrf, then } };
}

/**
 * `POST /oauth/logout`: ends the login session. The form must come from our own origin with the
 * session's CSRF token. `then=switch` keeps the authorization request in progress in a new
 * session and resumes it at the provider selection (sign in with another account); otherwise the
 * session is destroyed and the browser goes to the authorized-applications page.
 */
export async function logout(server: AuthorizationServer, req: Request, res: Response): Promise<void> {
  checkSameOrigin(server, req, 'The sign-out form was submitted from another site.');
  const form = formParams(req.body);
  const { logoutCsrf, pending } = readSessionState(req);
  if (!logoutCsrf || !safeEqual(form.get('csrf') ?? '', logoutCsrf)) {
    throw new OAuthError('invalid_request', 'This page has expired. Reload it and try again.', {
      redirectable: false,
    });
  }
  if (form.get('then') === 'switch' && pending) {
    // A new session id with only the request in progress: nothing of the signed-in user is left.
    await new Promise<void>((resolve, reject) =>
      req.session.regenerate((err) => (err ? reject(err) : resolve())),
    );
    writableSessionState(req, server.clock()).pending = pending;
    res.redirect(303, `${server.urls.base}/oauth/authorize/resume`);
    return;
  }
  await new Promise<void>((resolve, reject) => req.session.destroy((err) => (err ? reject(err) : resolve())));
  res.redirect(303, `${server.urls.base}/oauth/applications`);
}
