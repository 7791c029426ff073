import express from 'express';
import { registerDynamicClient } from '../../clients/dynamic.js';
import { hashSecret, secretMatchesHash } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext } from '../../events/emit.js';
import { json } from '../../http/answer.js';
import { addressKey, countInWindow, overLimit } from '../shared/client-rate-limit.js';
import { parse } from '../shared/form.js';
import { endpoint, type Context } from '../shared/pipeline.js';
import { ephemeralKeys } from '../../storage/keys.js';
import type { ResolvedOptions } from '../../config/options.js';

/** The registration options once on. */
type Settings = Exclude<ResolvedOptions['dynamicRegistration'], false>;

/** The context of the registration endpoint. */
interface RegistrationContext extends Context {
  /** The options of dynamic registration (the endpoint is mounted only when they are on). */
  settings: Settings;
  /** The request carried a good initial access token. */
  trusted: boolean;
  /** The client metadata, as JSON gave it: checked by the registration. */
  body: unknown;
}

/** The largest registration request: a client's metadata is a few hundred bytes. */
const BODY_LIMIT = '16kb';

/**
 * The client registration endpoint (RFC 7591 3): `POST /oauth/register` with the client's
 * metadata as JSON, answered `201` with the registered metadata (and, for a confidential client,
 * its secret, shown once). Served only with `dynamicRegistration` on. Registrations are counted
 * per address before anything else is read; an initial access token, when one is presented, must
 * be good; the metadata is checked by the rules of every registration.
 *
 * @see RFC 7591 sections 3.1, 3.2
 */
export const registrationEndpoint = endpoint<RegistrationContext>({
  name: 'registration',
  method: 'POST',
  path: '/oauth/register',
  kind: 'json',
  context: (ctx) => {
    const settings = ctx.server.options.dynamicRegistration;
    if (settings === false)
      throw new Error('the registration endpoint is mounted with dynamicRegistration off');
    return Object.assign(ctx, { settings, trusted: false, body: undefined });
  },
  steps: [limitRegistrations, checkInitialAccessToken, readMetadata, register],
});

/**
 * Step: registrations from one address, a burst per minute and a sustained rate per hour, each a
 * fixed window counted with the ephemeral store (shared by every instance); past either, `429`
 * with `Retry-After`. Every request counts, refused or not: a shared address (a service that
 * registers on each connection of its users) needs room, and an attacker gets no more.
 */
async function limitRegistrations(ctx: RegistrationContext): Promise<void> {
  const { server, req, settings } = ctx;
  if (settings.rateLimit === false) return;
  const address = addressKey(server, req);
  if (address === undefined) return;
  const windows = [
    { per: 'minute', max: settings.rateLimit.maxPerMinute, ms: 60_000 },
    { per: 'hour', max: settings.rateLimit.maxPerHour, ms: 3_600_000 },
  ];
  for (const { per, max, ms } of windows) {
    const key = ephemeralKeys.rateLimit(`register:${per}:${address}`);
    const wait = await countInWindow(server, key, max, ms);
    if (wait !== undefined) {
      const description = 'Too many client registrations from this address. Try again later.';
      throw overLimit(server, req, { limit: 'registration', per: 'address' }, description, wait);
    }
  }
}

/** RFC 6750 2.1: `Bearer` and a b64token. */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Step: an initial access token (RFC 7591 3), when the request presents one. Good, a
 * confidential client may register; anything else in `Authorization` is refused with `401
 * invalid_token` (RFC 6750 3.1), never taken for no token at all: the client believes it is
 * allowed more.
 */
async function checkInitialAccessToken(ctx: RegistrationContext): Promise<void> {
  const header = ctx.req.headers.authorization;
  if (header === undefined) return;
  const token = BEARER.exec(header)?.[1];
  const check = ctx.settings.initialAccessTokens;
  const good =
    token !== undefined &&
    check !== undefined &&
    (typeof check === 'function'
      ? (await check(token, ctx.req)) === true
      : check.some((known) => secretMatchesHash(token, hashSecret(known))));
  if (!good) {
    const description = 'The initial access token is invalid.';
    throw new OAuthError('invalid_token', description, {
      headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${description}"` },
    });
  }
  ctx.trusted = true;
}

const parseJson = express.json({ limit: BODY_LIMIT, strict: true, type: () => true });

/**
 * Step: the body, `application/json` only, at most 16 KiB. Whatever cannot be read as client
 * metadata (another type, malformed JSON, too large, a charset other than UTF-8) is
 * `invalid_client_metadata`, 400 (RFC 7591 3.2.2).
 */
function readMetadata(ctx: RegistrationContext): Promise<void> {
  const { req, res } = ctx;
  if (!req.is('application/json')) {
    throw new OAuthError(
      'invalid_client_metadata',
      'The body must be client metadata in application/json (RFC 7591 3.1).',
    );
  }
  // The JSON parser reads an empty body as `{}`: no metadata, rather than metadata without fields.
  if (req.headers['content-length'] === '0') {
    throw new OAuthError('invalid_client_metadata', 'The body is empty: send the client metadata as JSON.');
  }
  // A body the host's own JSON parser read already is taken as it is.
  return parse(parseJson, req, res).then(
    () => {
      ctx.body = req.body;
    },
    (err: unknown) => {
      const tooLarge = (err as { type?: unknown }).type === 'entity.too.large';
      throw new OAuthError(
        'invalid_client_metadata',
        tooLarge
          ? `The body is too large (at most ${BODY_LIMIT}).`
          : 'The body is not valid JSON client metadata.',
        { cause: err },
      );
    },
  );
}

/**
 * Step: registers the client and answers `201` with its registered metadata (RFC 7591 3.2.1),
 * reported as a `client.registered` event without its secret.
 */
async function register(ctx: RegistrationContext): Promise<void> {
  const { server, settings } = ctx;
  const now = server.clock();
  const registration = await registerDynamicClient(server.storage, ctx.body, {
    trusted: ctx.trusted,
    scopes: settings.scopes ?? Object.keys(server.options.scopes),
    now,
    extras: { registeredVia: 'dynamic', unusedExpiresAt: now + settings.unusedTtl * 1000 },
  });
  const { client } = registration;
  emit(server, {
    type: 'client.registered',
    clientId: client.clientId,
    applicationName: client.applicationName,
    redirectUri: client.redirectUri,
    scopes: client.scopes,
    public: client.public,
    initialAccessToken: ctx.trusted,
    ...eventContext(ctx.req),
  });
  ctx.answer = json(registration.metadata, 201);
}
