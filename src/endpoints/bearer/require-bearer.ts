import type { RequestHandler, Response } from 'express';
import { hashSecret } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { currentScopes, usable } from '../../grants/tokens.js';
import { teamsOf } from '../../grants/teams.js';
import { endpoint, handle, type Context } from '../../http/pipeline.js';
import type { AuthorizationServer } from '../../config/server.js';
import { unofferedScope } from '../../grants/scopes.js';
import type { FoundTokenRecord } from '../../storage/types.js';

/** What a handler behind {@link requireBearer} knows about the caller. */
export interface BearerContext {
  /**
   * The account the token was issued to: your own account id when the `accounts` option maps
   * logins to your users, else the library's user id.
   */
  userId: string;
  clientId: string;
  scopes: readonly string[];
  /** Epoch milliseconds after which the token stops working. */
  expiresAt: number;
  /**
   * With `requireBearer(server, { teams: true })`: the user's teams as the provider verified them
   * at their latest login (Launchpad's teams extension; `[]` when none). A membership lost since
   * then counts until the user signs in again.
   */
  teams?: readonly string[];
}

/** `res.locals` behind {@link requireBearer}: `Response<Body, BearerLocals>`. */
export interface BearerLocals {
  oauth: BearerContext;
}

/**
 * Options of {@link requireBearer}.
 *
 * @example
 * const readRealms: RequireBearerOptions = { scopes: ['realms:read'] };
 * app.get('/v1/realms', requireBearer(server, readRealms), listRealms);
 */
export interface RequireBearerOptions {
  /** Every one of these scopes must have been granted, else 403 `insufficient_scope`. */
  scopes?: readonly string[];
  /** The `realm` of the `WWW-Authenticate` challenge; defaults to the base URL's host. */
  realm?: string;
  /**
   * Put the user's teams on the bearer context (`bearerOf(res).teams`): one more read of the
   * storage per request (`users.findClaims`). Default `false`.
   */
  teams?: boolean;
}

interface GuardContext extends Context {
  /** The hash of the presented token. */
  tokenHash: string;
}

/** The scheme is Bearer, whatever follows. */
const NAMES_BEARER = /^bearer(\s|$)/i;

/** RFC 6750 2.1 b64token after the scheme, which is matched case-insensitively. */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Protects a route with an access token in the `Authorization: Bearer` header (RFC 6750 2.1; the
 * query and body forms are not accepted, and a request that also carries one of them is
 * `invalid_request`, RFC 6750 2). Missing, malformed, unknown, revoked or expired tokens get 401
 * with a `WWW-Authenticate` challenge; a token works for exactly `expires_in` seconds. When the
 * storage is unavailable the answer is 503 `temporarily_unavailable` with `Retry-After` and no
 * challenge, never 401: the token may well be valid.
 *
 * @example
 * app.get('/v1/realms', requireBearer(server), (req, res: Response<unknown, BearerLocals>) => {
 *   res.json(realmsOf(res.locals.oauth.userId));
 * });
 *
 * @see RFC 6750 sections 2, 2.1, 3, 3.1
 */
export function requireBearer(
  server: AuthorizationServer,
  options: RequireBearerOptions = {},
): RequestHandler {
  const realm = (options.realm ?? new URL(server.urls.base).host).replace(/["\\]/g, '');
  const required = options.scopes ?? [];
  if (options.teams && typeof server.storage.users.findClaims !== 'function') {
    throw new TypeError(
      'openid-oauth-bridge: requireBearer teams: the storage has no users.findClaims to read the teams from',
    );
  }
  // A scope the server does not offer could never be granted: a typo, refused now, not as a 403
  // a client's developer cannot explain.
  const unknown = unofferedScope(server.options.scopes, required);
  if (unknown !== undefined) {
    throw new TypeError(
      `openid-oauth-bridge: requireBearer scopes: ${JSON.stringify(unknown)} is not a scope the server offers (${Object.keys(server.options.scopes).join(', ')})`,
    );
  }
  const refuse = (code: 'invalid_request' | 'invalid_token' | 'insufficient_scope', description: string) => {
    const scope = required.length && code === 'insufficient_scope' ? `, scope="${required.join(' ')}"` : '';
    const challenge = `Bearer realm="${realm}", error="${code}", error_description="${description}"${scope}`;
    return new OAuthError(code, description, { headers: { 'WWW-Authenticate': challenge } });
  };

  return handle(
    server,
    endpoint<GuardContext>({
      name: 'bearer',
      method: 'GET',
      path: '*',
      kind: 'guard',
      steps: [
        function readToken(ctx) {
          const { req } = ctx;
          const header = req.headers.authorization;
          if (header === undefined || !NAMES_BEARER.test(header)) {
            // RFC 6750 3.1: no error code when the request has no authentication at all.
            ctx.res.set('WWW-Authenticate', `Bearer realm="${realm}"`);
            ctx.answer = { kind: 'empty', status: 401 };
            return;
          }
          if (otherMethod(ctx)) {
            throw refuse('invalid_request', 'The access token must be sent in one way only.');
          }
          const match = BEARER.exec(header);
          if (!match) throw refuse('invalid_token', 'The access token is malformed.');
          ctx.tokenHash = hashSecret(match[1]!);
        },
        function checkToken(ctx) {
          // An adapter written in JavaScript may answer without a promise.
          return Promise.resolve(ctx.server.storage.tokens.find(ctx.tokenHash)).then((found) =>
            grantAccess(ctx, found),
          );
        },
        function pass(ctx) {
          if (!options.teams) {
            ctx.answer = { kind: 'next' };
            return;
          }
          const bearer = (ctx.res.locals as BearerLocals).oauth;
          return teamsOf(server, bearer.userId).then((teams) => {
            bearer.teams = teams;
            ctx.answer = { kind: 'next' };
          });
        },
      ],
    }),
  );

  function grantAccess(ctx: GuardContext, found: FoundTokenRecord | null): void {
    if (!found || found.token.type !== 'access_token' || !usable(found, server.clock())) {
      throw refuse('invalid_token', 'The access token is invalid or has expired.');
    }
    const { userId, clientId, expiresAt } = found.token;
    // What the consent and the client still allow: a scope taken back stops working at once.
    const scopes = currentScopes(found);
    if (!required.every((scope) => scopes.includes(scope))) {
      throw refuse('insufficient_scope', 'The access token lacks a required scope.');
    }
    (ctx.res.locals as BearerLocals).oauth = { userId, clientId, scopes, expiresAt: expiresAt! };
  }
}

/** Whether the request also carries a token in the query or a parsed body (RFC 6750 2.2, 2.3). */
function otherMethod({ req }: Context): boolean {
  const url = req.originalUrl;
  const query = url.indexOf('?');
  if (query !== -1 && url.includes('access_token', query)) {
    if (new URLSearchParams(url.slice(query + 1)).has('access_token')) return true;
  }
  const body = req.body as Record<string, unknown> | undefined;
  return typeof body === 'object' && body !== null && Object.hasOwn(body, 'access_token');
}

/**
 * The caller of a route behind {@link requireBearer}, typed.
 *
 * @throws Error if `requireBearer` did not run before this handler.
 */
export function bearerOf(res: Response): BearerContext {
  const context = (res.locals as Partial<BearerLocals>).oauth;
  if (!context) throw new Error('requireBearer() must run before bearerOf()');
  return context;
}
