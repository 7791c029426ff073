import type { Request, Response } from 'express';
import { safeEqual } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext } from '../../events/emit.js';
import { formParams } from '../../http/params.js';
import type { AuthorizationServer } from '../../server.js';
import { clearPending, readSessionState } from '../../session/state.js';
import { recordConsent } from '../../grants/grant.js';
import { activeClient, complete } from './complete.js';
import { redirectError, targetOf, type AuthorizeLocals } from './redirect.js';

/**
 * `POST /oauth/authorize/decision`: the user's answer on the consent page. What is authorized is
 * taken from the session, never from the form; the form only carries the decision, the
 * transaction id and a CSRF token bound to the session, and must come from our own origin.
 */
export async function decide(
  server: AuthorizationServer,
  req: Request,
  res: Response<unknown, AuthorizeLocals>,
): Promise<void> {
  const expired = new OAuthError(
    'invalid_request',
    'This consent form has expired. Return to the application and start again.',
    { redirectable: false },
  );
  checkSameOrigin(server, req, 'The consent form was submitted from another site.');
  const form = formParams(req.body);
  const { pending, user, csrf } = readSessionState(req);
  if (!pending || !user || !csrf || form.get('transaction') !== pending.id) throw expired;
  if (!safeEqual(form.get('csrf') ?? '', csrf)) throw expired;

  res.locals.redirectTarget = targetOf(server, pending);
  const decision = form.get('decision');
  if (decision === 'deny') {
    clearPending(req);
    emit(server, {
      type: 'consent.denied',
      userId: user.id,
      clientId: pending.clientId,
      ...eventContext(req),
    });
    return redirectError(
      res,
      targetOf(server, pending),
      new OAuthError('access_denied', 'The user denied the request.'),
    );
  }
  if (decision !== 'allow')
    throw new OAuthError('invalid_request', 'Unknown decision.', { redirectable: false });
  await activeClient(server, pending.clientId);
  const grant = await recordConsent(server, user.id, pending.clientId, pending.scopes);
  emit(server, {
    type: 'consent.given',
    userId: user.id,
    clientId: pending.clientId,
    scopes: pending.scopes,
    ...eventContext(req),
  });
  await complete(server, req, res, user, pending, grant);
}

/**
 * A cross-site form post is refused even with a valid token (defence in depth). Browsers send
 * `Origin: null` for our own form because the page's Referrer-Policy is `no-referrer`, so the
 * reliable signal is `Sec-Fetch-Site`; `Origin` is checked when that is absent.
 */
export function checkSameOrigin(server: AuthorizationServer, req: Request, refusal: string): void {
  const fetchSite = req.get('sec-fetch-site');
  const origin = req.get('origin');
  const crossSite =
    fetchSite !== undefined
      ? fetchSite !== 'same-origin'
      : origin !== undefined && origin !== 'null' && origin !== new URL(server.urls.base).origin;
  if (crossSite) {
    throw new OAuthError('access_denied', refusal, { redirectable: false });
  }
}
