import { hashSecret } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { currentScopes, tokenSubject, usable } from '../../grants/tokens.js';
import type { Context, Step } from './pipeline.js';
import type { FoundTokenRecord } from '../../storage/types.js';
import { clientMayUse, type DeclaredResource } from '../../rules/resources.js';
import { accessTokenVerifier, looksLikeJwt } from '../../oidc/access-token.js';

/** What a handler behind `requireBearer`, or an endpoint that takes a bearer token, knows of the caller. */
export interface BearerContext {
  /**
   * Whom the token speaks for: `'user'`, a member who authorized the client (`userId` is theirs),
   * or `'client'`, the client itself (`userId` is `null`): a token of the client credentials grant,
   * which a bot or a job asks for with its own secret, for no member. A route that acts for a
   * member refuses a client's token:
   *
   * @example
   * const caller = bearerOf(res);
   * if (caller.userId === null) return res.status(403).json({ error: 'This route acts for a member.' });
   * res.json(realmsOf(caller.userId));
   */
  subject: 'user' | 'client';
  /**
   * The account the token was issued to: your own account id when the `accounts` option maps
   * logins to your users, else the library's user id. `null` for a client's own token (`subject`
   * `'client'`): no member stands behind it.
   */
  userId: string | null;
  /** The client the token was issued to; for a client's own token, also its subject. */
  clientId: string;
  scopes: readonly string[];
  /** Epoch milliseconds after which the token stops working. */
  expiresAt: number;
  /** The resource (RFC 8707) the route guards and the token is for; absent: none. */
  resource?: string;
  /**
   * With `requireBearer(server, { teams: true })`: the user's teams as the provider verified them
   * at their latest login (Launchpad's teams extension; `[]` when none). A membership lost since
   * then counts until the user signs in again.
   */
  teams?: readonly string[];
}

/** The context of an endpoint that takes an access token in `Authorization: Bearer`. */
export interface BearerStepContext extends Context {
  /** The hash of the presented token ({@link bearerSteps}' first step). */
  tokenHash: string;
  /** The presented token when it is a JWT, verified before its record is read; else absent. */
  jwt?: string;
  /** The caller, once the token is checked ({@link bearerSteps}' second step). */
  bearer: BearerContext;
}

/** What the challenge of a refusal says, and what the token must have been granted. */
export interface BearerChallenge {
  /** The `realm` of the `WWW-Authenticate` challenge. */
  realm: string;
  /** Every one of these scopes must have been granted, else 403 `insufficient_scope`. */
  scopes: readonly string[];
  /**
   * The resource (RFC 8707) the route is: only tokens bound to it are accepted, and every
   * challenge names its metadata (RFC 9728 5.1) and the scopes the route needs. `null`: a route of
   * no declared resource, which takes only tokens bound to none. Absent: any token (UserInfo).
   */
  resource?: DeclaredResource | null;
}

/** The scheme is Bearer, whatever follows. */
const NAMES_BEARER = /^bearer(\s|$)/i;

/** RFC 6750 2.1 b64token after the scheme, which is matched case-insensitively. */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * The two steps that read and check an access token in `Authorization: Bearer` (RFC 6750 2.1; the
 * query and body forms are not accepted, and a request that also carries one of them is
 * `invalid_request`, RFC 6750 2; with the `oauth2.1` profile a token in the query is
 * `invalid_request` whatever else the request carries): a request with no authentication at all
 * gets 401 with a bare challenge; a malformed, unknown, revoked or expired token 401 `invalid_token`; one lacking a
 * required scope 403 `insufficient_scope`, each with its `WWW-Authenticate` challenge. Once they
 * ran, `ctx.bearer` is the caller, with the scopes the consent and the client still allow.
 */
export function bearerSteps(challenge: BearerChallenge): Step<BearerStepContext>[] {
  const realm = challenge.realm.replace(/["\\]/g, '');
  const required = challenge.scopes;
  const guarded = challenge.resource;
  // RFC 9728 5.1: where a client learns which authorization server to ask, and for what; the
  // scopes too, so that it asks for what the route needs rather than every scope.
  const metadata = guarded ? `, resource_metadata="${guarded.metadataUrl}"` : '';
  const routeScope = required.length ? `, scope="${required.join(' ')}"` : '';
  const refuse = (code: 'invalid_request' | 'invalid_token' | 'insufficient_scope', description: string) => {
    const scope = code === 'insufficient_scope' || guarded ? routeScope : '';
    const header = `Bearer realm="${realm}", error="${code}", error_description="${description}"${scope}${metadata}`;
    return new OAuthError(code, description, { headers: { 'WWW-Authenticate': header } });
  };

  function readBearer(ctx: BearerStepContext): void {
    // OAuth 2.1 drops the query method: an access token in the URL leaks (logs, Referer). Refused
    // outright, not ignored, so the client's developer learns it (RFC 6750 3.1).
    if (ctx.server.options.profile === 'oauth2.1' && tokenInQuery(ctx)) {
      throw refuse(
        'invalid_request',
        'The access token must not be sent in the URL: use the Authorization header.',
      );
    }
    const header = ctx.req.headers.authorization;
    if (header === undefined || !NAMES_BEARER.test(header)) {
      // RFC 6750 3.1: no error code when the request has no authentication at all.
      ctx.res.set('WWW-Authenticate', `Bearer realm="${realm}"${guarded ? routeScope : ''}${metadata}`);
      ctx.answer = { kind: 'empty', status: 401 };
      return;
    }
    if (otherMethod(ctx)) throw refuse('invalid_request', 'The access token must be sent in one way only.');
    const match = BEARER.exec(header);
    if (!match) throw refuse('invalid_token', 'The access token is malformed.');
    const token = match[1]!;
    ctx.tokenHash = hashSecret(token);
    if (looksLikeJwt(token)) ctx.jwt = token;
  }

  let verify: ReturnType<typeof accessTokenVerifier> | undefined;

  function checkBearer(ctx: BearerStepContext): Promise<void> {
    if (ctx.jwt === undefined) return findCaller(ctx);
    // A JWT access token (RFC 9068) is checked as a resource server elsewhere checks it, then its
    // record is read as an opaque token's is: a token revoked, of a removed client or of a grant
    // ended is refused here although its signature still holds.
    verify ??= accessTokenVerifier(ctx.server, ctx.server.clock);
    return verify(ctx.jwt, guarded ? guarded.resource : undefined).then((valid) => {
      if (!valid) throw refuse('invalid_token', 'The access token is invalid or has expired.');
      return findCaller(ctx);
    });
  }

  function findCaller(ctx: BearerStepContext): Promise<void> {
    // An adapter written in JavaScript may answer without a promise.
    return Promise.resolve(ctx.server.storage.tokens.find(ctx.tokenHash)).then((found) => {
      ctx.bearer = callerOf(ctx, found);
      // Per-app usage: counted in memory, never a write here (src/usage/recorder.ts).
      ctx.server.usage?.record('bearer', ctx.bearer.clientId, ctx.bearer.userId, ctx.server.clock());
    });
  }

  function callerOf(ctx: BearerStepContext, found: FoundTokenRecord | null): BearerContext {
    if (!found || found.token.type !== 'access_token' || !usable(found, ctx.server.clock())) {
      throw refuse('invalid_token', 'The access token is invalid or has expired.');
    }
    const { clientId, expiresAt } = found.token;
    // RFC 8707: a token works only at the resource it was issued for.
    const audience = found.token.resources ?? [];
    const bound = guarded === null ? audience.length === 0 : !guarded || audience.includes(guarded.resource);
    // A resource the operator has since taken from the client stops working at once.
    if (!bound || (guarded && !clientMayUse(found.client!, guarded))) {
      throw refuse('invalid_token', 'The access token is not for this resource.');
    }
    // What the consent and the client still allow: a scope taken back stops working at once.
    const scopes = currentScopes(found);
    if (!required.every((scope) => scopes.includes(scope))) {
      throw refuse('insufficient_scope', 'The access token lacks a required scope.');
    }
    const subject = tokenSubject(found.token);
    const caller: BearerContext =
      subject.kind === 'client'
        ? { subject: 'client', userId: null, clientId, scopes, expiresAt: expiresAt! }
        : { subject: 'user', userId: subject.sub, clientId, scopes, expiresAt: expiresAt! };
    if (guarded) caller.resource = guarded.resource;
    return caller;
  }

  return [readBearer, checkBearer];
}

/** Whether the request carries a token in its query (RFC 6750 2.3). */
function tokenInQuery({ req }: Context): boolean {
  const url = req.originalUrl;
  const query = url.indexOf('?');
  return (
    query !== -1 &&
    url.includes('access_token', query) &&
    new URLSearchParams(url.slice(query + 1)).has('access_token')
  );
}

/** Whether the request also carries a token in the query or a parsed body (RFC 6750 2.2, 2.3). */
function otherMethod(ctx: Context): boolean {
  if (tokenInQuery(ctx)) return true;
  const { req } = ctx;
  const body = req.body as Record<string, unknown> | undefined;
  return typeof body === 'object' && body !== null && Object.hasOwn(body, 'access_token');
}
