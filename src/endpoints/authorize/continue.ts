import { generateSecret } from '../../crypto/secrets.js';
import {
  asksEachTime,
  clientRedirectUriMatches,
  grantOfResponseType,
  inService,
} from '../../rules/client-kind.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext, listened } from '../../events/emit.js';
import { issueCode } from '../../grants/index.js';
import { admits, teamRefused, teamsOf } from '../../grants/teams.js';
import { makerName, reachCapped } from '../../clients/member-reach.js';
import { expiresIn, saveAccessToken } from '../../grants/tokens.js';
import { page, redirect } from '../../http/answer.js';
import { backToClient, redirectTargetOf } from '../../http/redirect.js';
import { scopesCover, unofferedScope } from '../../rules/scopes.js';
import { clientMayUse, findResource } from '../../rules/resources.js';
import type { ConsentPageData } from '../../pages/types.js';
import {
  pictureOf,
  type PendingAuthorization,
  type PendingRedirect,
  type SessionUser,
} from '../../session/state.js';
import type { ClientRecord, GrantRecord } from '../../storage/types.js';
import { loginUrl, providerChoices, signOutForm } from '../shared/login-links.js';
import { readClientAndGrant, type AuthorizeContext } from './request.js';
import { DocumentRefusedError, namedClient } from '../shared/document-client.js';

/**
 * Step: where the authorization goes next. A user signed in (at the requested provider, if one is
 * named) who already trusts the client with these scopes goes back to the client with a code or
 * token at once; one who does not is asked on the consent page. Anyone else logs in at the named
 * provider, or chooses one on the selection page. Only a request that must wait for the user is
 * remembered in the session.
 */
export async function continueAuthorization(ctx: AuthorizeContext): Promise<void> {
  const { server, client, pending, provider } = ctx;
  const signedIn =
    ctx.user && freshEnough(ctx.user, pending) && hinted(pending, ctx.user) ? ctx.user : undefined;
  // A user the host signed in cannot be sent to log in again here: when the host's login is not
  // known to be recent enough, or is not the user the relying party asked about, it learns so
  // (it never gets an invented auth_time, nor another user's tokens).
  if (ctx.user?.viaHost && !signedIn) {
    throw new OAuthError('login_required', 'A more recent sign-in is required.');
  }
  const user = signedIn;
  if (user && (!provider || user.viaHost || user.provider === provider.name)) {
    await rememberHostTeams(ctx, user);
    await checkAllowedTeams(ctx, user);
    await checkReach(ctx, user);
    const everyTime = asksEveryTime(client, pending);
    if (pending.kind === 'redirect' && !everyTime && pending.prompt !== 'consent') {
      // Read with the client, for this user ({@link readClientAndGrant}); a revoked one stands no more.
      const { grant: read } = ctx;
      // The pair is checked here too: the reader is the adapter's, and a grant of this user at
      // another client must never stand for consent to this one.
      const grant =
        read !== null &&
        read.revokedAt === null &&
        read.userId === user.id &&
        read.clientId === client.clientId
          ? read
          : null;
      if (grant && scopesCover(grant.scopes, pending.scopes) && resourceCovered(grant, pending)) {
        ctx.session!.clearPending();
        return issue(ctx, pending, user, grant);
      }
    }
    // OpenID Connect Core 3.1.2.6: prompt=none shows no page.
    if (pending.prompt === 'none') {
      throw new OAuthError(
        'consent_required',
        'The user has not trusted this application with these scopes.',
      );
    }
    const csrf = generateSecret();
    remember(ctx, csrf);
    ctx.session!.write().consentFor = user.id;
    ctx.answer = page(
      server.pages.consent({
        applicationName: client.applicationName,
        clientId: client.clientId,
        scopes: pending.scopes.map((name) => ({ name, description: server.options.scopes[name] ?? '' })),
        ...resourceShown(ctx),
        action: server.urls.consentDecision,
        fields: { transaction: pending.id, csrf },
        signedInAs: user.displayName ?? user.identifier,
        ...pictureOf(user),
        ...(pending.kind === 'device' ? { userCode: pending.device.userCode } : {}),
        ...(everyTime ? { asksEachTime: true } : {}),
        ...(client.document && pending.kind === 'redirect'
          ? { clientDocument: documentFacts(client.clientId, pending.redirectUri) }
          : {}),
        ...(client.registeredVia === 'dynamic' && pending.kind === 'redirect'
          ? { selfRegistered: { redirectHost: redirectHostOf(pending.redirectUri) } }
          : {}),
        ...(await memberMade(ctx)),
        ...(user.viaHost ? {} : { provider: user.provider, switchAccount: signOutForm(ctx, 'switch') }),
      }),
    );
    return;
  }
  if (pending.prompt === 'none') {
    throw new OAuthError('login_required', 'The user must sign in.');
  }
  remember(ctx);
  if (provider) {
    ctx.answer = redirect(loginUrl(server, provider.identifier));
    return;
  }
  ctx.answer = page(
    server.pages.selection({
      applicationName: client.applicationName,
      providers: providerChoices(server),
    }),
  );
}

/** What the consent page says of a client named by its metadata document: where it comes from and goes. */
function documentFacts(clientId: string, redirectUri: string) {
  const redirect = new URL(redirectUri);
  return { documentHost: new URL(clientId).host, redirectHost: redirect.host || redirect.protocol };
}

/**
 * Where a self-registered application sends the person back, for its consent page: the redirect
 * URI's host, or its scheme for an app's own scheme (as a document client's page says it).
 */
function redirectHostOf(redirectUri: string): string {
  const redirect = new URL(redirectUri);
  return redirect.host || redirect.protocol;
}

/**
 * Whether every authorization of this request asks the person, even for an application trusted
 * before: a device's always does (RFC 8628 5.4: a typed code alone approves nothing); so does a
 * native app's, whose public client_id any local program can send (RFC 8252 8.6).
 */
function asksEveryTime(client: ClientRecord, pending: PendingAuthorization): boolean {
  return pending.kind === 'device' || asksEachTime(client, pending.redirectUri);
}

/**
 * Whether the signed-in user is the one an `id_token_hint` names, when the request sent one
 * (OpenID Connect Core 3.1.2.1): anyone else counts as not signed in for this request (with
 * `prompt=none`, `login_required`; otherwise the login page, where they may switch).
 */
function hinted(pending: PendingAuthorization, user: SessionUser): boolean {
  return pending.kind !== 'redirect' || pending.hintSubject === undefined || pending.hintSubject === user.id;
}

/**
 * A client only members of some teams may use (`allowedTeams`) refuses anyone else with
 * `access_denied`: on a page that says why, whose way back takes the error to the client when its
 * redirect URI is verified (with `prompt=none`, straight to the client: no page). The teams are
 * read where every gate reads them ({@link teamsOf}: the claims of the account's latest login, or
 * what the host last said of a user it signed in), one read for a gated client only.
 */
export async function checkAllowedTeams(ctx: AuthorizeContext, user: SessionUser): Promise<void> {
  const allowed = ctx.client.allowedTeams ?? [];
  if (allowed.length === 0 || admits(allowed, await teamsForGate(ctx, user))) return;
  const flow = ctx.pending.kind === 'device' ? 'device' : 'authorization';
  emit(ctx.server, teamRefused(ctx.client, user.id, flow, eventContext(ctx.req)));
  const teams = allowed.map((team) => `~${team}`).join(', ');
  throw new OAuthError(
    'access_denied',
    `${ctx.client.applicationName} is only for members of ${teams}, and the account you signed in with is not one.`,
    { redirectable: ctx.pending.prompt === 'none' },
  );
}

/**
 * A member's application the operator has not verified refuses one member more than
 * `developerApps.unverifiedReach` with `access_denied`, as the team gate does: a page that says
 * why, whose way back takes the error to the client (with `prompt=none`, straight to it).
 * Someone who trusts it already is within the reach.
 */
export async function checkReach(ctx: AuthorizeContext, user: SessionUser): Promise<void> {
  const { server, client } = ctx;
  const reach = await reachCapped(server, client, user.id);
  if (reach === undefined) return;
  emit(server, {
    type: 'app.reach_capped',
    clientId: client.clientId,
    ownerId: client.ownerId!,
    userId: user.id,
    reach,
    ...eventContext(ctx.req),
  });
  throw new OAuthError(
    'access_denied',
    `${client.applicationName} is a member's application not yet verified by this site's operator, and it has as many members as such an application may (${reach}).`,
    { redirectable: ctx.pending.prompt === 'none' },
  );
}

/** What the consent page says of a member's application: who made it, whether the operator vouches for it, and its own words. */
async function memberMade({ server, client, pending }: AuthorizeContext): Promise<Partial<ConsentPageData>> {
  const described = {
    ...(client.description ? { description: client.description } : {}),
    ...(client.homepageUri ? { homepageUri: client.homepageUri } : {}),
  };
  if (client.ownerId == null) return described;
  const maker = {
    name: await makerName(server, client.ownerId),
    verified: client.verified === true,
    ...(pending.kind === 'redirect' ? { redirectHost: redirectHostOf(pending.redirectUri) } : {}),
  };
  return { ...described, maker };
}

/**
 * The teams a gate checks: for a user the host signed in, what the host says of them on this
 * request (none said, none counted: an earlier answer saved for their refreshes does not stand in
 * for it); for a provider login, the teams saved with the account's claims at its latest login.
 */
async function teamsForGate(ctx: AuthorizeContext, user: SessionUser): Promise<readonly string[]> {
  return user.viaHost ? (user.hostTeams ?? []) : teamsOf(ctx.server, user.id);
}

/**
 * The teams the host says a user it signed in belongs to (`authenticatedAccount`), saved with the
 * account's claims as a provider login saves them: the one place every team gate (this one, the
 * refreshes of a team-gated client, `requireBearer({ teams: true })`, introspection and UserInfo)
 * reads. One read per such authorization; a write only when they changed.
 */
async function rememberHostTeams(ctx: AuthorizeContext, user: SessionUser): Promise<void> {
  const { users } = ctx.server.storage;
  const teams = user.hostTeams;
  if (!user.viaHost || teams === undefined || !users.findClaims || !users.saveClaims) return;
  const claims = (await users.findClaims(user.id)) ?? {};
  const saved = claims.groups;
  const same = Array.isArray(saved) && saved.length === teams.length && saved.every((t, i) => t === teams[i]);
  if (!same) await users.saveClaims(user.id, { ...claims, groups: teams });
}

/**
 * Whether the user's login is recent enough for the request (`prompt=login`, `max_age`): a user
 * the host signed in (`authenticatedAccount`) logged in there, at a time the host vouches for.
 */
function freshEnough(user: SessionUser, pending: PendingAuthorization): boolean {
  if (pending.loginSince === undefined) return true;
  return user.authTime !== undefined && user.authTime >= pending.loginSince;
}

/**
 * The request is the session's pending one from now on; an older one is forgotten. A resumed
 * request is already there: the session is written only if something changes.
 */
function remember(ctx: AuthorizeContext, csrf?: string): void {
  const session = ctx.session!;
  const { pending, csrf: shown } = session.state;
  if (pending === ctx.pending && shown === csrf) return;
  const state = session.write();
  state.pending = ctx.pending;
  if (csrf === undefined) delete state.csrf;
  else state.csrf = csrf;
}

/** Step of the resumed requests: the authorization in progress in this browser. */
export function readPending(ctx: AuthorizeContext): void {
  const { pending } = ctx.session!.state;
  // A request saved by an older release (no `kind`) is not resumed: the client starts again.
  if (!pending || (pending.kind !== 'redirect' && pending.kind !== 'device')) {
    throw new OAuthError('invalid_request', 'There is no sign-in in progress in this browser.', {
      redirectable: false,
    });
  }
  ctx.pending = pending;
}

/**
 * Step of the resumed requests: the client of the pending request, read again (with the signed-in
 * user's grant at it) and checked as the authorization request checked it (the operator may have disabled it, changed its redirect URI
 * or its scopes, or removed it, while the user was logging in or reading the consent page). Only
 * then are errors sent back to the redirect URI verified when the request arrived; otherwise the
 * error page, never a redirect to a URI the client no longer has.
 */
export async function loadActiveClient(ctx: AuthorizeContext): Promise<void> {
  const { server, pending, req } = ctx;
  const stored = await readClientAndGrant(ctx, pending.clientId);
  // A client named by its metadata document is checked against the document as it is now.
  const client = await Promise.resolve(namedClient(server, pending.clientId, stored, req)).catch((err) => {
    if (err instanceof DocumentRefusedError) return null;
    throw err;
  });
  const expectedGrant = pending.kind === 'device' ? 'device_code' : grantOfResponseType(pending.responseType);
  if (
    !client ||
    !inService(client) ||
    client.grantType !== expectedGrant ||
    (pending.kind === 'redirect' &&
      !clientRedirectUriMatches(client, pending.redirectUri, server.options.profile)) ||
    !scopesCover(client.scopes, pending.scopes) ||
    unofferedScope(server.options.scopes, pending.scopes) !== undefined ||
    !resourceStillOffered(ctx, client)
  ) {
    throw new OAuthError('access_denied', 'The client application is no longer registered as it was.', {
      redirectable: false,
    });
  }
  ctx.client = client;
  // A device's request has no browser to go back to: its errors are pages.
  if (pending.kind === 'redirect') ctx.redirectTarget = redirectTargetOf(server.urls.issuer, pending);
  // An implicit request that arrived before a restart with the oauth2.1 profile ends as one
  // arriving now would.
  if (
    pending.kind === 'redirect' &&
    pending.responseType === 'token' &&
    server.options.profile === 'oauth2.1'
  ) {
    throw new OAuthError('unsupported_response_type', 'This server has no implicit grant (OAuth 2.1).');
  }
}

/**
 * Issues the code or token of an authorization request the user has approved (now or before)
 * under `grant`, and answers with the redirect back to the client.
 */
export async function issue(
  ctx: AuthorizeContext,
  pending: PendingRedirect,
  user: SessionUser,
  grant: GrantRecord,
): Promise<void> {
  const { server, req } = ctx;
  const subject = {
    clientId: pending.clientId,
    userId: user.id,
    scopes: pending.scopes,
    grantId: grant.grantId,
    ...(pending.resource === undefined ? {} : { resources: [pending.resource] }),
  };
  const target = ctx.redirectTarget!;
  if (pending.responseType === 'code') {
    const code = await issueCode(server, {
      ...subject,
      redirectUri: pending.redirectUri,
      codeChallenge: pending.codeChallenge,
      codeChallengeMethod: pending.codeChallengeMethod,
      ...(pending.nonce === undefined ? {} : { nonce: pending.nonce }),
      // Unknown for a user the host signed in without saying when: no auth_time then.
      ...(user.authTime === undefined ? {} : { authTime: user.authTime }),
      ...(user.claims === undefined ? {} : { claims: user.claims }),
    });
    if (listened(server, 'code.issued')) {
      const pkce = pending.codeChallenge !== null;
      emit(server, { type: 'code.issued', ...subject, pkce, ...eventContext(req) });
    }
    ctx.issued = 'authorization_code';
    ctx.answer = backToClient(target, { code }, req.method);
    return;
  }
  const access = await saveAccessToken(server, subject, 'implicit', server.clock(), user.authTime);
  if (listened(server, 'token.issued')) {
    emit(server, {
      type: 'token.issued',
      grantType: 'implicit',
      ...subject,
      refreshToken: false,
      ...eventContext(req),
    });
  }
  ctx.issued = 'implicit';
  ctx.answer = backToClient(
    target,
    {
      access_token: access.token,
      token_type: 'Bearer',
      expires_in: String(expiresIn(access.record)),
      ...(pending.scopes.length ? { scope: pending.scopes.join(' ') } : {}),
    },
    req.method,
  );
}

/** Whether the user already trusts the client with the resource the request is for (none: yes). */
function resourceCovered(grant: GrantRecord, pending: PendingAuthorization): boolean {
  return pending.resource === undefined || (grant.resources ?? []).includes(pending.resource);
}

/** The resource the consent page names, when the request is for one. */
function resourceShown({ server, pending }: AuthorizeContext): Pick<ConsentPageData, 'resource'> {
  if (pending.resource === undefined) return {};
  const declared = findResource(server.resources, pending.resource);
  const name = declared?.name;
  return { resource: { uri: pending.resource, ...(name === undefined ? {} : { name }) } };
}

/** Whether the resource of a resumed request is still declared, and the client may still use it. */
function resourceStillOffered({ server, pending }: AuthorizeContext, client: ClientRecord): boolean {
  if (pending.resource === undefined) return true;
  const declared = findResource(server.resources, pending.resource);
  return declared !== undefined && clientMayUse(client, declared);
}
