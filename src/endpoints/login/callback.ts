import { randomId } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext } from '../../events/emit.js';
import { redirect } from '../../http/answer.js';
import type { Context } from '../shared/pipeline.js';
import { normalizeIdentifier } from '../../login/openid/normalize-identifier.js';
import { findProvider } from '../../login/providers.js';
import { isSubject } from '../../login/accounts.js';
import { LOGIN_SESSION_KEY } from '../../session/state.js';
import type { PendingAuthorization } from '../../session/state.js';
import type { AccountClaims, UserRecord } from '../../storage/types.js';
import type { ProfileFacts } from '../../login/openid/provider-policy.js';
import { readProfile } from '../../login/profile.js';
import { LoginFailed } from '../../errors/login-failed.js';
import { reportLoginFailure, runLogin, type LoginIdentity } from './run-login.js';
import { isPagePurpose, pageUrl, type PagePurpose } from '../shared/login-links.js';

export interface CallbackContext extends Context {
  /** What the login is for: the authorization it was started for, or a page. */
  purpose: PendingAuthorization | PagePurpose;
  identity: LoginIdentity;
  /** The library's user of the verified identity. */
  libraryUser: UserRecord;
  /** The configured provider the user signed in at, by its current name (shown, and in events). */
  providerName: string;
  /** The account the login signs in to: the library's user, or the host's account (`accounts`). */
  account: { id: string; displayName?: string };
  /** The account's public profile, when its provider has a profile source and it could be read. */
  profile?: ProfileFacts;
}

/**
 * Step: a login is in progress in this browser, and the authorization it was started for is still
 * the one in progress: the code will be issued for the request whose consent the user sees,
 * never for one swapped in while the login was pending.
 */
export function checkLoginInProgress(ctx: CallbackContext): void {
  const { pending, loginFor } = ctx.session!.state;
  if (isPagePurpose(loginFor) && !pending) {
    ctx.purpose = loginFor;
    return;
  }
  if (pending && loginFor === pending.id) {
    ctx.purpose = pending;
    return;
  }
  throw new OAuthError(
    'invalid_request',
    pending
      ? 'Another sign-in was started in this browser while this one was in progress. Start again.'
      : 'There is no sign-in in progress in this browser. Return to the application and start again.',
    { redirectable: false },
  );
}

/** Step: the strategy checks the provider's answer. */
export async function verifyAtProvider(ctx: CallbackContext): Promise<void> {
  const identity = await runLogin(ctx, ctx.req, providerOfLogin(ctx));
  if (identity !== undefined) ctx.identity = identity;
}

/**
 * Step: the account's public profile from its provider's profile source (Steam's Web API), when it
 * has one: read (or reused from the cache) within the source's bounds; a login never waits longer
 * or fails for it ({@link readProfile}).
 */
export async function readAccountProfile(ctx: CallbackContext): Promise<void> {
  const { server, identity } = ctx;
  const provider = identity.provider === undefined ? undefined : findProvider(server, identity.provider);
  if (provider?.profile === undefined) return;
  const key = identity.accountKey ?? identity.identifier;
  const profile = await readProfile(server, provider.name, provider.profile, key, () =>
    eventContext(ctx.req),
  );
  if (profile !== undefined) ctx.profile = profile;
}

/** Step: the user of the verified identity, created at the first login. */
export async function findOrCreateUser(ctx: CallbackContext): Promise<void> {
  const { server, identity } = ctx;
  ctx.providerName = identity.provider ?? defaultProviderName(ctx);
  // One spelling per identity, whatever the strategy (passport-openid stores what it received).
  const normalized = normalizeIdentifier(identity.identifier);
  const identifier = normalized ?? identity.identifier;
  // A claimed identifier the library's own relying party verified (by discovery, at the provider
  // that is authoritative for it) names one person whichever configured provider asserted it: the
  // user is keyed by it alone (namespace `openid`), so renaming a provider or moving to its preset
  // changes no user. A host strategy's identifier, URL or not, was checked by nobody the library
  // knows: it stays namespaced by the provider the strategy names.
  const verifiedHere = server.options.login.strategy === undefined && normalized !== null;
  const namespace = verifiedHere ? OPENID_NAMESPACE : ctx.providerName;
  ctx.libraryUser = await server.storage.users.findOrCreate(
    { identifier, provider: namespace },
    randomId(),
    server.clock(),
  );
}

/** The `provider` of every user whose claimed identifier the library's relying party verified. */
const OPENID_NAMESPACE = 'openid';

/**
 * Step: the account the login signs in to. With `accounts`, the host maps the verified login to
 * its own account (a second provider may link to an existing one) or refuses it with a message
 * for the user; otherwise the account is the library's user.
 */
export async function chooseAccount(ctx: CallbackContext): Promise<void> {
  const { server, identity, libraryUser, profile } = ctx;
  const displayName = identity.displayName ?? profile?.name;
  const hook = server.options.accounts;
  if (hook === undefined) {
    ctx.account = { id: libraryUser.id, ...(displayName === undefined ? {} : { displayName }) };
    return;
  }
  const decision = await hook(
    {
      provider: ctx.providerName,
      identifier: libraryUser.identifier,
      accountKey: identity.accountKey ?? libraryUser.identifier,
      ...(displayName === undefined ? {} : { displayName }),
      attributes: identity.attributes ?? {},
      ...(identity.teams === undefined ? {} : { teams: identity.teams }),
      ...(profile === undefined ? {} : { profile }),
      userId: libraryUser.id,
    },
    ctx.req,
  );
  if (decision !== null && typeof decision === 'object' && 'refuse' in decision) {
    const message = String(decision.refuse).slice(0, 300) || 'This account may not sign in here.';
    reportLoginFailure(ctx, 'failed', message);
    throw new LoginFailed(message, server.urls.resume);
  }
  const accountId = (decision as { accountId?: unknown } | null)?.accountId;
  if (typeof accountId !== 'string' || !isSubject(server, accountId)) {
    throw new OAuthError('server_error', 'The sign-in could not be completed.', {
      redirectable: false,
      cause: new TypeError(
        'accounts must resolve { accountId (1 to 255 characters; printable ASCII with OpenID Connect on), displayName? } or { refuse }',
      ),
    });
  }
  const name = (decision as { displayName?: unknown }).displayName;
  ctx.account = { id: accountId, ...(typeof name === 'string' ? { displayName: name } : {}) };
}

/**
 * Step: signs the user in with a new session id (no session fixation, RFC 6819 4.4.1.x) that
 * carries over only what the login was for, then post/redirect/get: the consent page (or the
 * redirect to the client) comes from the resumed request, so reloading it or going back never
 * replays the provider's answer.
 */
export async function signIn(ctx: CallbackContext): Promise<void> {
  const { server, libraryUser, account, purpose, providerName } = ctx;
  emit(server, {
    type: 'login.succeeded',
    userId: account.id,
    provider: providerName,
    ...(typeof purpose === 'string' ? {} : { clientId: purpose.clientId }),
    ...eventContext(ctx.req),
  });
  // UserInfo, requireBearer's and introspection's teams read the claims of the latest login of
  // the account tokens are issued to: saved at every login, none included.
  const claims = claimsOfLogin(ctx);
  await server.storage.users.saveClaims?.(account.id, claims);
  // A sign-in again before a secret is made keeps the form the member filled in.
  const kept = purpose === 'developers' ? ctx.session!.state.developerDraft : undefined;
  const draft = kept?.userId === account.id ? kept : undefined;
  const state = await ctx.session!.regenerate();
  if (draft !== undefined) state.developerDraft = draft;
  state.user = {
    id: account.id,
    identifier: libraryUser.identifier,
    provider: providerName,
    ...(account.displayName === undefined ? {} : { displayName: account.displayName }),
    authTime: server.clock(),
    ...(Object.keys(claims).length === 0 ? {} : { claims }),
  };
  if (typeof purpose === 'string') {
    ctx.answer = redirect(draft?.returnTo ?? pageUrl(server, purpose), 303);
    return;
  }
  state.pending = purpose;
  ctx.answer = redirect(server.urls.resume, 303);
}

/**
 * The account's claims of this login: the provider's (`steam_id`, `name`, ...), the public
 * profile's (`name`, `picture`, `profile`) and, when the provider was asked about teams, `groups`.
 */
function claimsOfLogin({ identity, profile }: CallbackContext): AccountClaims {
  return {
    ...(profile?.name === undefined ? {} : { name: profile.name }),
    ...(profile?.picture === undefined ? {} : { picture: profile.picture }),
    ...(profile?.profileUrl === undefined ? {} : { profile: profile.profileUrl }),
    ...identity.claims,
    ...(identity.teams === undefined ? {} : { groups: identity.teams }),
  };
}

/** The provider of the built-in login in progress, read before the strategy clears its state. */
function providerOfLogin(ctx: Context): string | undefined {
  const state = ctx.session!.strategyState(LOGIN_SESSION_KEY) as { provider?: unknown } | undefined;
  const name = state?.provider;
  return typeof name === 'string' ? findProvider(ctx.server, name)?.identifier : undefined;
}

function defaultProviderName({ server }: Context): string {
  return server.options.providers.length === 1 ? server.options.providers[0]!.name : 'openid';
}
