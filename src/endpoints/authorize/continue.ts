import { generateSecret } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext, listened } from '../../events/emit.js';
import { newCode } from '../../grants/codes.js';
import { standingGrant } from '../../grants/index.js';
import { newToken } from '../../grants/tokens.js';
import { runOperation } from '../../storage/batch.js';
import { page, redirect } from '../../http/answer.js';
import { backToClient, type RedirectTarget } from '../../http/redirect.js';
import { scopesCover } from '../../grants/scopes.js';
import type { AuthorizationServer } from '../../server.js';
import type { BridgeSessionState, PendingAuthorization, SessionUser } from '../../session/state.js';
import type { BatchOperation, GrantRecord } from '../../storage/types.js';
import { loginUrl, providerChoices } from '../login/url.js';
import { signOutForm } from '../logout/endpoint.js';
import { readClientAndGrant, type AuthorizeContext } from './request.js';

/**
 * Step: where the authorization goes next. A user signed in (at the requested provider, if one is
 * named) who already trusts the client with these scopes goes back to the client with a code or
 * token at once; one who does not is asked on the consent page. Anyone else logs in at the named
 * provider, or chooses one on the selection page. Only a request that must wait for the user is
 * remembered in the session.
 */
export async function continueAuthorization(ctx: AuthorizeContext): Promise<void> {
  const { server, client, pending, provider } = ctx;
  const session = ctx.session!;
  const { user } = ctx;
  if (user && (!provider || user.viaHost || user.provider === provider.name)) {
    const hinted = hintToTry(ctx, user.id);
    let grant: GrantRecord | null;
    if (hinted !== undefined) {
      // The code is stored under the grant the session last saw, in one batch with the grant
      // itself (one round trip; the write first, so a SQL transaction takes its write lock at
      // once), and handed out only if that very grant still stands and covers the scopes.
      // Otherwise it is never handed out: nobody can present it, and it expires unused within the
      // code lifetime.
      const issuing = prepareIssue(ctx, user, hinted);
      const [, found] = await server.storage.batch!([
        issuing.write,
        { op: 'grants.find', userId: user.id, clientId: client.clientId },
      ]);
      grant = found !== null && found.revokedAt === null ? found : null;
      if (grant?.grantId === hinted && scopesCover(grant.scopes, pending.scopes)) {
        session.clearPending();
        issuing.handOver();
        return;
      }
      if (grant?.grantId !== hinted) forgetGrant(ctx, user.id, client.clientId);
    } else {
      grant = await standingGrant(ctx, user.id, client.clientId);
    }
    if (grant && scopesCover(grant.scopes, pending.scopes)) {
      session.clearPending();
      return issue(ctx, user, grant);
    }
    const csrf = generateSecret();
    remember(ctx, csrf);
    ctx.session!.write().consentFor = user.id;
    ctx.answer = page(
      server.pages.consent({
        applicationName: client.applicationName,
        clientId: client.clientId,
        scopes: pending.scopes.map((name) => ({ name, description: server.options.scopes[name] ?? '' })),
        action: server.urls.consentDecision,
        fields: { transaction: pending.id, csrf },
        signedInAs: user.displayName ?? user.identifier,
        ...(user.viaHost ? {} : { provider: user.provider, switchAccount: signOutForm(ctx, 'switch') }),
      }),
    );
    return;
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
  if (!pending) {
    throw new OAuthError('invalid_request', 'There is no sign-in in progress in this browser.', {
      redirectable: false,
    });
  }
  ctx.pending = pending;
}

/**
 * Step of the resumed requests: the client of the pending request, read again (it may have been
 * disabled while the user was logging in or reading the consent page). Its redirect URI was
 * verified when the request arrived: errors go back to it from now on.
 */
export async function loadActiveClient(ctx: AuthorizeContext): Promise<void> {
  const { server, pending } = ctx;
  const client = await readClientAndGrant(ctx, pending.clientId);
  if (!client || client.disabled) {
    throw new OAuthError('access_denied', 'The client application is no longer registered.', {
      redirectable: false,
    });
  }
  ctx.client = client;
  ctx.redirectTarget = targetOf(server, pending);
}

function targetOf(server: AuthorizationServer, pending: PendingAuthorization): RedirectTarget {
  return {
    redirectUri: pending.redirectUri,
    responseType: pending.responseType,
    state: pending.state,
    issuer: server.urls.issuer,
  };
}

/**
 * Issues the code or token of an authorization request the user has approved (now or before)
 * and answers with the redirect back to the client. The session remembers the grant, so the
 * next authorization for this client stores its code in one batch with the grant's read.
 */
export async function issue(ctx: AuthorizeContext, user: SessionUser, grant: GrantRecord): Promise<void> {
  const issuing = prepareIssue(ctx, user, grant.grantId);
  await runOperation(ctx.server.storage, issuing.write);
  rememberGrant(ctx, user.id, grant);
  issuing.handOver();
}

/** A code or token to store, and the answer that hands it over once it is stored. */
interface Issuing {
  write: BatchOperation;
  handOver(): void;
}

/** The code or token of the pending request under `grantId`, not stored yet. */
function prepareIssue(ctx: AuthorizeContext, user: SessionUser, grantId: string): Issuing {
  const { server, pending, req } = ctx;
  const subject = { clientId: pending.clientId, userId: user.id, scopes: pending.scopes };
  const target = ctx.redirectTarget!;
  if (pending.responseType === 'code') {
    const { code, write } = newCode(server, {
      ...subject,
      grantId,
      redirectUri: pending.redirectUri,
      codeChallenge: pending.codeChallenge,
      codeChallengeMethod: pending.codeChallengeMethod,
    });
    return {
      write,
      handOver() {
        if (listened(server, 'code.issued')) {
          const pkce = pending.codeChallenge !== null;
          emit(server, { type: 'code.issued', ...subject, grantId, pkce, ...eventContext(req) });
        }
        ctx.answer = backToClient(target, { code }, req.method);
      },
    };
  }
  const access = newToken(server, 'access_token', { ...subject, grantId }, 'implicit', server.clock());
  return {
    write: { op: 'tokens.save', token: access.record },
    handOver() {
      emit(server, {
        type: 'token.issued',
        grantType: 'implicit',
        ...subject,
        grantId,
        refreshToken: false,
        ...eventContext(req),
      });
      ctx.answer = backToClient(
        target,
        {
          access_token: access.token,
          token_type: 'Bearer',
          expires_in: String(server.options.tokens.accessTokenTtl),
          ...(pending.scopes.length ? { scope: pending.scopes.join(' ') } : {}),
        },
        req.method,
      );
    },
  };
}

/** How many grants a session remembers (the session state's `grantHints`). */
const GRANT_HINTS = 16;

/**
 * The grant to store this request's code under ahead of reading it, if the session remembers
 * one: only for a code (short-lived, in the ephemeral store; an implicit token would be a durable
 * row), where hints are kept, and when the grant was not read already.
 */
function hintToTry(ctx: AuthorizeContext, userId: string): string | undefined {
  if (!hintsKept(ctx) || ctx.grantReadAhead || ctx.pending.responseType !== 'code') return undefined;
  return hintedGrant(ctx, userId, ctx.client.clientId);
}

/**
 * Whether this server keeps grant hints: where {@link hintToTry} can use them, the library's own
 * session over a storage whose batch is one round trip (where the session reads along).
 */
const hintsKept = (ctx: AuthorizeContext) => ctx.server.session.readAlong !== undefined;

/** The grant this session last saw `userId` issued under for `clientId`, if any. */
function hintedGrant(ctx: AuthorizeContext, userId: string, clientId: string): string | undefined {
  for (const [user, client, grantId] of ctx.session!.state.grantHints ?? []) {
    if (user === userId && client === clientId) return grantId;
  }
  return undefined;
}

/**
 * Remembers the grant in the session, unless it already is or hints are not used here. A session
 * that holds nothing of the library's (a host account's, never signed in here) is not started for
 * it.
 */
function rememberGrant(ctx: AuthorizeContext, userId: string, grant: GrantRecord): void {
  const session = ctx.session!;
  if (!hintsKept(ctx) || session.state.startedAt === undefined) return;
  if (hintedGrant(ctx, userId, grant.clientId) === grant.grantId) return;
  const kept = withoutHint(session.state.grantHints, userId, grant.clientId);
  kept.push([userId, grant.clientId, grant.grantId]);
  session.write().grantHints = kept.slice(-GRANT_HINTS);
}

/** Forgets a hint that named a grant no longer there, so no later request writes ahead under it. */
function forgetGrant(ctx: AuthorizeContext, userId: string, clientId: string): void {
  const session = ctx.session!;
  session.write().grantHints = withoutHint(session.state.grantHints, userId, clientId);
}

const withoutHint = (
  hints: BridgeSessionState['grantHints'],
  userId: string,
  clientId: string,
): NonNullable<BridgeSessionState['grantHints']> =>
  (hints ?? []).filter(([user, client]) => user !== userId || client !== clientId);
