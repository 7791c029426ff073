import type { Request } from 'express';
import { LoginFailed, ProviderUnreachable } from '../../errors/login-failed.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext } from '../../events/emit.js';
import { redirect } from '../../http/answer.js';
import type { Context } from '../shared/pipeline.js';
import { findProvider } from '../../login/providers.js';
import { runStrategy } from '../../login/run-strategy.js';
import { isPagePurpose, loginUrl, pageUrl } from '../shared/login-links.js';

/** The identity a login strategy must pass to `success()`. */
export interface LoginIdentity {
  /** Stable external identifier of the user (the OpenID claimed identifier). */
  identifier: string;
  /** Name of the provider; defaults to the only configured one's or `openid`. */
  provider?: string;
  /** The provider's stable key for the account (a preset's, e.g. the SteamID64); default `identifier`. */
  accountKey?: string;
  /** A name to show, verified by the provider. */
  displayName?: string;
  /** Verified attribute values (sreg), by name. */
  attributes?: Record<string, string>;
  /**
   * OpenID Connect claims of the account (`steam_id`, `name`, `preferred_username`), from the
   * verified login only: they go into ID tokens and UserInfo answers as they are.
   */
  claims?: Record<string, string>;
  /**
   * The teams the provider verified the user a member of (Launchpad's teams extension), when it
   * was asked about teams: the user's `groups`, and what a client's `allowedTeams` is checked against.
   */
  teams?: string[];
}

/**
 * Runs the login strategy on `req` (the request, or a view of it). A redirect becomes the answer
 * and resolves `undefined`; a success resolves the identity; anything else throws the error
 * page's error. `provider` is the identifier of the provider being logged in at, when known, for
 * the page shown if it does not answer. The strategy keeps its state in the session.
 */
export async function runLogin(
  ctx: Context,
  req: Request,
  provider: string | undefined,
): Promise<LoginIdentity | undefined> {
  const { server } = ctx;
  const outcome = await runStrategy(server.loginStrategy, ctx.session!.forStrategy(req), { session: false });
  // Where the way back leads: the sign-in's own start, the authorization or the page it is for.
  const { loginFor } = ctx.session!.state;
  const forPage = isPagePurpose(loginFor) ? loginFor : undefined;
  const resume = forPage ? pageUrl(server, forPage) : server.urls.resume;
  switch (outcome.kind) {
    case 'redirect':
      ctx.answer = redirect(outcome.url);
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
      reportLoginFailure(ctx, 'failed', reason, provider);
      if ((outcome as { challenge?: { kind?: unknown } }).challenge?.kind === 'provider_unreachable') {
        const others = server.options.providers.length > 1 ? resume : undefined;
        throw new ProviderUnreachable(
          reason,
          provider === undefined ? resume : loginUrl(server, provider, forPage),
          others,
          (outcome as { challenge?: { error?: unknown } }).challenge?.error,
        );
      }
      throw new LoginFailed(reason, resume);
    }
    case 'error':
      reportLoginFailure(ctx, 'error', 'The sign-in failed unexpectedly.', provider);
      throw new OAuthError('server_error', 'The sign-in failed unexpectedly.', {
        redirectable: false,
        cause: outcome.error,
      });
  }
}

/**
 * Reports a login that did not complete, with the message the user is shown, and the configured
 * provider's name: the login's own once it knows it, else that of `provider` (its identifier).
 */
export function reportLoginFailure(
  ctx: Context,
  outcome: 'failed' | 'error',
  reason: string,
  provider?: string,
): void {
  const clientId = ctx.session!.state.pending?.clientId;
  const known = (ctx as { providerName?: unknown }).providerName;
  const name =
    typeof known === 'string'
      ? known
      : provider === undefined
        ? undefined
        : findProvider(ctx.server, provider)?.name;
  emit(ctx.server, {
    type: 'login.failed',
    outcome,
    reason,
    ...(clientId === undefined ? {} : { clientId }),
    ...(name === undefined ? {} : { provider: name }),
    ...eventContext(ctx.req),
  });
}

function failureMessage(challenge: unknown): string {
  const message = (challenge as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && message.length < 300
    ? message
    : 'The sign-in at your OpenID provider failed.';
}

function isLoginIdentity(user: unknown): user is LoginIdentity {
  const identity = user as LoginIdentity | undefined;
  const text = (value: unknown, max: number) =>
    value === undefined || (typeof value === 'string' && value.length > 0 && value.length <= max);
  const attributes = identity?.attributes;
  return (
    typeof identity?.identifier === 'string' &&
    text(identity.identifier, 2048) &&
    text(identity.provider, 200) &&
    text(identity.accountKey, 512) &&
    text(identity.displayName, 200) &&
    (attributes === undefined ||
      (typeof attributes === 'object' &&
        attributes !== null &&
        Object.values(attributes).every((value) => typeof value === 'string' && value.length <= 1024))) &&
    (identity.claims === undefined ||
      (typeof identity.claims === 'object' &&
        identity.claims !== null &&
        Object.keys(identity.claims).length <= 20 &&
        Object.values(identity.claims).every(
          (value) => typeof value === 'string' && value.length <= 1024,
        ))) &&
    (identity.teams === undefined ||
      (Array.isArray(identity.teams) &&
        identity.teams.length <= 50 &&
        identity.teams.every((team) => typeof team === 'string' && team.length > 0 && team.length <= 64)))
  );
}
