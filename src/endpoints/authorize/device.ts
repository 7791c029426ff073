import { continueAuthorization, loadActiveClient } from './continue.js';
import type { AuthorizeContext } from './request.js';
import { addressKey, countInWindow, reportOverLimit } from '../shared/client-rate-limit.js';
import { findByUserCode, normalizeUserCode } from '../../grants/device.js';
import { randomId } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext } from '../../events/emit.js';
import { page } from '../../http/answer.js';
import type { DeviceCodePageData } from '../../pages/types.js';
import { readPageForm, type FormContext } from '../shared/form.js';
import { endpoint, type Context } from '../shared/pipeline.js';
import { sameOrigin } from '../shared/same-origin.js';
import { loadSession } from '../shared/load-session.js';
import { identifyUser } from '../shared/identify.js';
import { ephemeralKeys } from '../../storage/keys.js';

/**
 * The verification page (RFC 8628 3.3): `GET /oauth/device`, where a person types the code their
 * device shows. `verification_uri_complete` fills the code in (`?user_code=`); the person still
 * confirms it (RFC 8628 5.4): nothing is looked up before they submit.
 */
export const deviceEntryEndpoint = endpoint<Context>({
  name: 'device_verification',
  method: 'GET',
  path: '/oauth/device',
  kind: 'page',
  steps: [loadSession, identifyUser, showEntry],
});

/**
 * `POST /oauth/device`: the code typed. A live one starts the authorization as the authorization
 * endpoint does (sign-in at a provider if needed, then the consent page, which always asks for a
 * device); a wrong, expired or used one shows the page again saying so. Codes typed are limited
 * per account or address, and for everyone anonymous ({@link limitGuesses}).
 */
export const deviceSubmitEndpoint = endpoint<DeviceContext>({
  name: 'device_verification',
  method: 'POST',
  path: '/oauth/device',
  kind: 'page',
  steps: [
    // No CSRF token (the page writes no session): a post must show it comes from this page.
    sameOrigin('The code was submitted from another site.', { unmarked: 'refuse' }),
    readPageForm('2kb', 5),
    loadSession,
    identifyUser,
    limitGuesses,
    findDevice,
    loadActiveClient,
    continueAuthorization,
  ],
});

type DeviceContext = AuthorizeContext & FormContext;

function showEntry(ctx: Context): void {
  const { req, user } = ctx;
  const given = typeof req.query.user_code === 'string' ? req.query.user_code : undefined;
  // Prefilled only with something that can be a code: nothing else of the URL is shown.
  const userCode = given === undefined ? undefined : (normalizeUserCode(given) ?? undefined);
  codePage(ctx, {
    ...(userCode === undefined ? {} : { userCode }),
    ...(user ? { signedInAs: user.displayName ?? user.identifier } : {}),
  });
}

/**
 * Answers with the code page. Its form carries no CSRF token, so its posts must show where they
 * come from; the page is sent with `Referrer-Policy: same-origin` (instead of the pages'
 * `no-referrer`), with which a browser that sends no `Sec-Fetch-Site` still sends this origin,
 * not `null`, as the form's `Origin`. Other sites learn nothing more: they get no referrer at all.
 */
function codePage(ctx: Context, data: Omit<DeviceCodePageData, 'action'>, status = 200): void {
  ctx.res.setHeader('Referrer-Policy', 'same-origin');
  ctx.answer = page(ctx.server.pages.deviceCode({ action: ctx.server.urls.device, ...data }), status);
}

/**
 * Step: every code typed counts, right or wrong, atomically (racing requests cannot overshoot):
 * per signed-in account, or per address and for everyone anonymous together. Past a limit the
 * request is refused with 429 and `Retry-After` until the minute ends, the right code included,
 * so the limit cannot tell a right guess from a wrong one. A signed-in person is never held by the
 * anonymous limit, so a flood of anonymous guesses cannot keep people out who sign in first.
 */
async function limitGuesses(ctx: DeviceContext): Promise<void> {
  const { server, req, user } = ctx;
  const { maxUserCodeAttempts, maxAnonymousUserCodeAttempts } = server.options.device;
  const address = addressKey(server, req);
  const limits = user
    ? [
        {
          key: ephemeralKeys.rateLimit(`device-code:account:${user.id}`),
          max: maxUserCodeAttempts,
          per: 'account' as const,
        },
      ]
    : [
        ...(address === undefined
          ? []
          : [
              {
                key: ephemeralKeys.rateLimit(`device-code:address:${address}`),
                max: maxUserCodeAttempts,
                per: 'address' as const,
              },
            ]),
        {
          key: ephemeralKeys.rateLimit('device-code:anonymous'),
          max: maxAnonymousUserCodeAttempts,
          per: 'everyone' as const,
        },
      ];
  for (const { key, max, per } of limits) {
    const seconds = await countInWindow(server, key, max, 60_000);
    if (seconds === undefined) continue;
    emit(server, { type: 'device.user_code_rejected', limited: true, ...eventContext(req) });
    reportOverLimit(server, req, { limit: 'device_user_code', per });
    ctx.res.setHeader('Retry-After', String(seconds));
    codePage(ctx, { error: `Too many codes were tried. Wait ${seconds} seconds, then try again.` }, 429);
    return;
  }
}

/** Step: the live device request of the code typed, as the pending authorization of this browser. */
async function findDevice(ctx: DeviceContext): Promise<void> {
  const { server, req, params } = ctx;
  const typed = params.get('user_code') ?? '';
  const userCode = normalizeUserCode(typed);
  const found = userCode === null ? null : await findByUserCode(server, userCode);
  if (found === null) {
    emit(server, { type: 'device.user_code_rejected', limited: false, ...eventContext(req) });
    const error =
      userCode === null
        ? 'That is not a code: a code is eight consonants (no vowels, no digits), such as BDFH-JKLM.'
        : 'That code is wrong, has expired or was used already. Check the code on your device, or start again there.';
    codePage(ctx, { ...(userCode === null ? {} : { userCode }), error }, 400);
    return;
  }
  const { request } = found;
  ctx.pending = {
    kind: 'device',
    id: randomId(),
    clientId: request.clientId,
    device: { hash: found.hash, userCode: request.userCode },
    scopes: request.scopes,
    ...(request.resources?.length ? { resource: request.resources[0]! } : {}),
    createdAt: server.clock(),
  };
}

/** Refused when the device request ended while the person was signing in or reading the page. */
export const deviceGone = () =>
  new OAuthError(
    'invalid_request',
    'This code has expired or was answered already. Start again on your device.',
    { redirectable: false },
  );
