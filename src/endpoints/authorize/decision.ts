import { safeEqual } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext } from '../../events/emit.js';
import { recordConsent } from '../../grants/grant.js';
import { readPageForm, type FormContext } from '../shared/form.js';
import { endpoint } from '../shared/pipeline.js';
import { backToClient } from '../../http/redirect.js';
import { page } from '../../http/answer.js';
import {
  answerDevice,
  approveDevice,
  findByUserCode,
  type DeviceApprover,
  type LiveDevice,
} from '../../grants/device.js';
import { deviceGone } from './device.js';
import { sameOrigin } from '../shared/same-origin.js';
import type { PendingAuthorization, PendingDevice, SessionUser } from '../../session/state.js';
import { identifyUser } from '../shared/identify.js';
import { loadSession } from '../shared/load-session.js';
import { checkAllowedTeams, checkReach, issue, loadActiveClient } from './continue.js';
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
  name: 'consent',
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
    (pending.kind !== 'redirect' && pending.kind !== 'device') ||
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

/**
 * Step: the decision. A denial goes back as the request's variant is answered; an approval records
 * the consent once ({@link recordConsent}), then the variant answers: a code or token at the
 * redirect URI, or the device's answer saved for its next poll.
 */
async function decide(ctx: ConsentContext): Promise<void> {
  const { server, pending, user, client, req } = ctx;
  const decision = ctx.params.get('decision');
  await checkAllowedTeams(ctx, user);
  if (decision === 'allow') await checkReach(ctx, user);
  if (decision !== 'allow' && decision !== 'deny')
    throw new OAuthError('invalid_request', 'Unknown decision.', { redirectable: false });
  const live = pending.kind === 'device' ? await liveDevice(ctx, pending) : undefined;
  ctx.session!.clearPending();
  if (decision === 'deny') {
    if (live) {
      if (!(await answerDevice(server, live, { approved: false, userId: user.id }))) throw deviceGone();
      emit(server, {
        type: 'device.denied',
        userId: user.id,
        clientId: client.clientId,
        ...eventContext(req),
      });
      ctx.answer = page(
        server.pages.deviceDone({ applicationName: client.applicationName, approved: false }),
      );
      return;
    }
    emit(server, {
      type: 'consent.denied',
      userId: user.id,
      clientId: client.clientId,
      ...eventContext(req),
    });
    const denied = { error: 'access_denied', error_description: 'The user denied the request.' };
    ctx.answer = backToClient(ctx.redirectTarget!, denied, req.method);
    return;
  }
  const grant = live
    ? await approveDevice(server, live, approverOf(user), client)
    : (await recordConsent(server, user.id, client.clientId, pending.scopes, client, resourcesOf(pending)))
        .grant;
  if (grant === null) throw deviceGone();
  const { clientId } = client;
  emit(server, {
    type: 'consent.given',
    userId: user.id,
    clientId,
    scopes: pending.scopes,
    ...eventContext(req),
  });
  if (pending.kind === 'redirect') return issue(ctx, pending, user, grant);
  const authorized = { userId: user.id, clientId, scopes: pending.scopes, grantId: grant.grantId };
  emit(server, { type: 'device.authorized', ...authorized, ...eventContext(req) });
  ctx.answer = page(server.pages.deviceDone({ applicationName: client.applicationName, approved: true }));
}

/** The device request the consent page was shown for, still waiting for an answer. */
async function liveDevice(ctx: ConsentContext, pending: PendingDevice): Promise<LiveDevice> {
  const live = await findByUserCode(ctx.server, pending.device.userCode);
  if (live === null || live.hash !== pending.device.hash) throw deviceGone();
  return live;
}

/** The person approving, with what an ID token of the device's tokens will say of their login. */
function approverOf(user: SessionUser): DeviceApprover {
  return {
    userId: user.id,
    ...(user.authTime === undefined ? {} : { authTime: user.authTime }),
    ...(user.claims === undefined ? {} : { claims: user.claims }),
  };
}

/** The resources a request is for, as a grant keeps them. */
function resourcesOf(pending: PendingAuthorization): string[] {
  return pending.resource === undefined ? [] : [pending.resource];
}
