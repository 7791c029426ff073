import type { Request, Response } from 'express';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext } from '../../events/emit.js';
import { rawQuery } from '../../http/params.js';
import { runStrategy } from '../../login/run-strategy.js';
import { findProvider, LOGIN_SESSION_KEY, type AuthorizationServer } from '../../server.js';
import {
  readSessionState,
  writableSessionState,
  type PendingAuthorization,
  type SessionUser,
} from '../../session/state.js';
import type { UserRecord } from '../../storage/types.js';
import { randomId } from '../../crypto/secrets.js';

/**
 * The URL of the login route for one configured provider; `for: 'applications'` signs in for the
 * authorized-applications page rather than for a pending authorization.
 */
export function loginUrl(server: AuthorizationServer, identifier: string, purpose?: 'applications'): string {
  const query = new URLSearchParams({ openid_identifier: identifier });
  if (purpose) query.set('for', purpose);
  return `${server.urls.base}/oauth/login?${query}`;
}

/** The identity a login strategy must pass to `success()`. */
export interface LoginIdentity {
  /** Stable external identifier of the user (the OpenID claimed identifier). */
  identifier: string;
  /** Name of the provider; defaults to the only configured one's or `openid`. */
  provider?: string;
}

/**
 * What this sign-in is for: the pending authorization of this session, or the
 * authorized-applications page; otherwise a page explaining that there is no sign-in in progress.
 */
function purposeOf(req: Request): PendingAuthorization | 'applications' {
  const { pending, signInFor } = readSessionState(req);
  if (pending) return pending;
  if (signInFor === 'applications') return signInFor;
  throw new OAuthError(
    'invalid_request',
    'There is no sign-in in progress in this browser. Return to the application and start again.',
    { redirectable: false },
  );
}

/**
 * `GET /oauth/login`: starts the login at the chosen provider. The provider must be one the
 * operator configured, whatever the login strategy: a host's own strategy (passport-openid, say)
 * would otherwise contact any identifier a visitor types.
 */
export async function startLogin(server: AuthorizationServer, req: Request, res: Response): Promise<void> {
  const query = new URLSearchParams(rawQuery(req.originalUrl));
  const forApplications = query.getAll('for').join() === 'applications';
  if (!forApplications) purposeOf(req);
  const identifier = query.getAll('openid_identifier');
  const [only, ...more] = identifier;
  if (only === undefined || more.length > 0 || findProvider(server, only)?.identifier !== only) {
    throw new OAuthError('invalid_request', 'This OpenID provider is not accepted here.', {
      redirectable: false,
    });
  }
  // A sign-in for the applications page is remembered only now that it starts, not when the page
  // with its link was shown; a pending authorization of this browser keeps precedence.
  if (forApplications && !readSessionState(req).pending)
    writableSessionState(req, server.clock()).signInFor = 'applications';
  await runLogin(server, req, res, only);
}

/** `GET /oauth/login/callback`: finishes the login, then asks for consent or completes. */
export async function finishLogin(server: AuthorizationServer, req: Request, res: Response): Promise<void> {
  const purpose = purposeOf(req);
  const identity = await runLogin(server, req, res, providerOfLogin(server, req));
  if (!identity) return;
  const provider = identity.provider ?? defaultProviderName(server);
  const user = await server.storage.users.findOrCreate(
    { identifier: identity.identifier, provider },
    randomId(),
    server.clock(),
  );
  emit(server, {
    type: 'login.succeeded',
    userId: user.id,
    provider,
    ...(purpose === 'applications' ? {} : { clientId: purpose.clientId }),
    ...eventContext(req),
  });
  await regenerate(req);
  // The new session starts with only what the login needs to carry over (RFC 6819 4.4.1.x: no
  // session fixation).
  if (purpose === 'applications') {
    writableSessionState(req, server.clock()).user = sessionUser(user);
    res.redirect(303, `${server.urls.base}/oauth/applications`);
    return;
  }
  Object.assign(writableSessionState(req, server.clock()), { user: sessionUser(user), pending: purpose });
  // Post/redirect/get: the consent page (or the redirect to the client) comes from the resumed
  // request, so reloading it or going back never replays the provider's answer.
  res.redirect(303, `${server.urls.authorization}/resume`);
}

/**
 * Runs the login strategy; resolves the identity on success, `undefined` once it has redirected.
 * `provider` is the identifier of the provider being logged in at, when known, for the page
 * shown if it does not answer.
 */
async function runLogin(
  server: AuthorizationServer,
  req: Request,
  res: Response,
  provider: string | undefined,
): Promise<LoginIdentity | undefined> {
  const outcome = await runStrategy(server.loginStrategy, req, { session: false });
  switch (outcome.kind) {
    case 'redirect':
      res.redirect(302, outcome.url);
      return undefined;
    case 'success':
      if (!isLoginIdentity(outcome.user)) {
        throw new OAuthError('server_error', 'The login strategy returned no identity.', {
          redirectable: false,
          cause: new TypeError(
            'login strategy success() must receive { identifier: string, provider?: string }',
          ),
        });
      }
      return outcome.user;
    case 'fail':
    case 'pass': {
      const reason =
        outcome.kind === 'fail' ? failureMessage(outcome.challenge) : 'The sign-in could not be completed.';
      reportLoginFailure(server, req, 'failed', reason);
      if (
        outcome.kind === 'fail' &&
        (outcome.challenge as { kind?: unknown } | undefined)?.kind === 'provider_unreachable'
      ) {
        throw new ProviderUnreachable(reason, provider);
      }
      throw new LoginFailed(reason);
    }
    case 'error':
      reportLoginFailure(server, req, 'error', 'The sign-in failed unexpectedly.');
      throw new OAuthError('server_error', 'The sign-in failed unexpectedly.', {
        redirectable: false,
        cause: outcome.error,
      });
  }
}

/** Reports a login that did not complete, with the message the user is shown. */
function reportLoginFailure(
  server: AuthorizationServer,
  req: Request,
  outcome: 'failed' | 'error',
  reason: string,
): void {
  const clientId = readSessionState(req).pending?.clientId;
  emit(server, {
    type: 'login.failed',
    outcome,
    reason,
    ...(clientId === undefined ? {} : { clientId }),
    ...eventContext(req),
  });
}

/** A login that failed for a reason the user can act on: shown with a way to try again. */
export class LoginFailed extends OAuthError {
  constructor(message: string) {
    super('access_denied', message, { redirectable: false });
  }
}

/**
 * The provider did not answer in time, or not at all (the built-in login's `provider_unreachable`,
 * bounded by `login.timeoutMs` per request): a 502 page that offers to try again or to choose
 * another provider.
 */
export class ProviderUnreachable extends LoginFailed {
  readonly pageStatus = 502;
  constructor(
    message: string,
    /** The identifier of the provider, when known. */
    readonly provider: string | undefined,
  ) {
    super(message);
  }
}

/** The provider of the built-in login in progress, read before the strategy clears its state. */
function providerOfLogin(server: AuthorizationServer, req: Request): string | undefined {
  const state = (req.session as unknown as Record<string, { provider?: unknown } | undefined>)[
    LOGIN_SESSION_KEY
  ];
  const name = state?.provider;
  return typeof name === 'string' ? findProvider(server, name)?.identifier : undefined;
}

function failureMessage(challenge: unknown): string {
  const message = (challenge as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && message.length < 300
    ? message
    : 'The sign-in at your OpenID provider failed.';
}

function isLoginIdentity(user: unknown): user is LoginIdentity {
  const identity = user as LoginIdentity | undefined;
  return (
    typeof identity?.identifier === 'string' &&
    identity.identifier.length > 0 &&
    identity.identifier.length <= 2048 &&
    (identity.provider === undefined || typeof identity.provider === 'string')
  );
}

function defaultProviderName(server: AuthorizationServer): string {
  return server.options.providers.length === 1 ? server.options.providers[0]!.name : 'openid';
}

function regenerate(req: Request): Promise<void> {
  return new Promise((resolve, reject) => req.session.regenerate((err) => (err ? reject(err) : resolve())));
}

/** What the session keeps of a user who has just logged in. */
function sessionUser(user: UserRecord): SessionUser {
  return { id: user.id, identifier: user.identifier, provider: user.provider };
}
