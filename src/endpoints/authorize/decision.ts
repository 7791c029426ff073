import { safeEqual } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext } from '../../events/emit.js';
import { recordConsent } from '../../grants/grant.js';
import { readPageForm, type FormContext } from '../../http/form.js';
import { endpoint } from '../../http/pipeline.js';
import { backToClient } from '../../http/redirect.js';
import { page } from '../../http/answer.js';
import { answerDevice, findByUserCode } from '../../grants/device.js';
import { deviceGone } from '../device/verification.js';
import { sameOrigin } from '../../http/same-origin.js';
import type { SessionUser } from '../../session/state.js';
import { identifyUser } from '../../session/identify.js';
import { loadSession } from '../../session/load.js';
import { checkAllowedTeams, issue, loadActiveClient } from './continue.js';
import type { AuthorizeContext } from './request.js';

interface ConsentContext extends AuthorizeContext, FormContext {
  /** The signed-in user the consent page was shown to. */
  user: SessionUser;
}

/**
 * `POST /oauth/authorize/decision`: the user's answer on the consent page. What is authorized is
 * taken from the session, never from the form; the form only carries the decision, the
 * transaction id and a CSRF token bound to the session, and must come from our own origin.
 */
export const consentEndpoint = endpoint<ConsentContext>({
  name: 'authorization',
  method: 'POST',
  path: '/oauth/authorize/decision',
  kind: 'page',
  steps: [
    sameOrigin('The consent form was submitted from another site.'),
    readPageForm('4kb', 10),
    loadSession,
    identifyUser,
    checkConsentForm,
    loadActiveClient,
    decide,
  ],
});

/** Step: the form answers the consent page this session showed last, with its CSRF token. */
function checkConsentForm(ctx: ConsentContext): void {
  const { pending, csrf, consentFor } = ctx.session!.state;
  const { params, user } = ctx;
  if (
    !pending ||
    !user ||
    !csrf ||
    consentFor !== user.id ||
    params.get('transaction') !== pending.id ||
    !safeEqual(params.get('csrf') ?? '', csrf)
  ) {
    throw new OAuthError(
      'invalid_request',
      'This consent form has expired. Return to the application and start again.',
      { redirectable: false },
    );
  }
  ctx.pending = pending;
  ctx.user = user;
}

async function decide(ctx: ConsentContext): Promise<void> {
  const { server, pending, user, req } = ctx;
  const decision = ctx.params.get('decision');
  checkAllowedTeams(ctx, user);
  if (pending.device) return decideDevice(ctx, pending.device, decision);
  if (decision === 'deny') {
    ctx.session!.clearPending();
    emit(server, {
      type: 'consent.denied',
      userId: user.id,
      clientId: pending.clientId,
      ...eventContext(req),
    });
    const denied = { error: 'access_denied', error_description: 'The user denied the request.' };
    ctx.answer = backToClient(ctx.redirectTarget!, denied, req.method);
    return;
  }
  if (decision !== 'allow')
    throw new OAuthError('invalid_request', 'Unknown decision.', { redirectable: false });
  const grant = await recordConsent(server, user.id, pending.clientId, pending.scopes, ctx.client);
  emit(server, {
    type: 'consent.given',
    userId: user.id,
    clientId: pending.clientId,
    scopes: pending.scopes,
    ...eventContext(req),
  });
  ctx.session!.clearPending();
  await issue(ctx, user, grant);
}

/**
 * The person's answer to a device's request (RFC 8628 3.3): recorded once for the device's next
 * poll, and a page that says so (there is no browser redirect to send it back with). An approval
 * records the consent as a browser's does: the device's grant is on the applications page, and
 * revoking it ends the device's tokens.
 */
async function decideDevice(
  ctx: ConsentContext,
  device: { hash: string; userCode: string },
  decision: string | undefined,
): Promise<void> {
  const { server, pending, user, client, req } = ctx;
  if (decision !== 'allow' && decision !== 'deny')
    throw new OAuthError('invalid_request', 'Unknown decision.', { redirectable: false });
  const live = await findByUserCode(server, device.userCode);
  if (live === null || live.hash !== device.hash) throw deviceGone();
  ctx.session!.clearPending();
  if (decision === 'deny') {
    if (!(await answerDevice(server, live, { approved: false, userId: user.id }))) throw deviceGone();
    emit(server, { type: 'device.denied', userId: user.id, clientId: client.clientId, ...eventContext(req) });
  } else {
    const grant = await recordConsent(server, user.id, client.clientId, pending.scopes, client);
    const approved = {
      approved: true as const,
      userId: user.id,
      grantId: grant.grantId,
      ...(user.authTime === undefined ? {} : { authTime: user.authTime }),
      ...(user.claims === undefined ? {} : { claims: user.claims }),
    };
    if (!(await answerDevice(server, live, approved))) throw deviceGone();
    const { clientId } = client;
    emit(server, {
      type: 'consent.given',
      userId: user.id,
      clientId,
      scopes: pending.scopes,
      ...eventContext(req),
    });
    const authorized = { userId: user.id, clientId, scopes: pending.scopes, grantId: grant.grantId };
    emit(server, { type: 'device.authorized', ...authorized, ...eventContext(req) });
  }
  const done = { applicationName: client.applicationName, approved: decision === 'allow' };
  ctx.answer = page(server.pages.deviceDone(done));
}
