import { safeEqual } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { page, redirect } from '../../http/answer.js';
import { readPageForm, type FormContext } from '../shared/form.js';
import { endpoint } from '../shared/pipeline.js';
import { sameOrigin } from '../shared/same-origin.js';
import { loadSession } from '../shared/load-session.js';
import { withState } from '../shared/login-links.js';

/**
 * `POST /oauth/logout`: ends the login session. The form must come from our own origin with the
 * session's CSRF token. `then=switch` keeps the authorization request in progress in a new
 * session and resumes it at the provider selection (sign in with another account); otherwise the
 * session ends and the browser goes to the authorized-applications page.
 */
export const logoutEndpoint = endpoint<FormContext>({
  name: 'logout',
  method: 'POST',
  path: '/oauth/logout',
  kind: 'page',
  steps: [
    sameOrigin('The sign-out form was submitted from another site.'),
    readPageForm('2kb', 5),
    loadSession,
    checkLogoutForm,
    signOut,
  ],
});

function checkLogoutForm(ctx: FormContext): void {
  const { logoutCsrf } = ctx.session!.state;
  if (!logoutCsrf || !safeEqual(ctx.params.get('csrf') ?? '', logoutCsrf)) {
    throw new OAuthError('invalid_request', 'This page has expired. Reload it and try again.', {
      redirectable: false,
    });
  }
}

async function signOut(ctx: FormContext): Promise<void> {
  const { server } = ctx;
  const session = ctx.session!;
  const { pending } = session.state;
  if (ctx.params.get('then') === 'switch' && pending) {
    // A new session id with only the request in progress: nothing of the signed-in user is left.
    (await session.regenerate()).pending = pending;
    ctx.answer = redirect(server.urls.resume, 303);
    return;
  }
  // OpenID Connect RP-initiated logout: the target the end-session request verified, if any.
  const endSession = ctx.params.get('then') === 'end-session' ? session.state.endSession : undefined;
  const rpInitiated = ctx.params.get('then') === 'end-session';
  await session.end();
  if (endSession) {
    ctx.answer = redirect(withState(endSession), 303);
    return;
  }
  ctx.answer = rpInitiated ? page(server.pages.signOut({})) : redirect(server.urls.applications, 303);
}
