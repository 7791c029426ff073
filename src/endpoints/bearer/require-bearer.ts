import type { RequestHandler, Response } from 'express';
import { teamsOf } from '../../grants/teams.js';
import { endpoint, handle } from '../shared/pipeline.js';
import type { AuthorizationServer } from '../../config/server.js';
import { unofferedScope } from '../../rules/scopes.js';
import { findResource, type DeclaredResource } from '../../rules/resources.js';
import { bearerSteps, type BearerContext, type BearerStepContext } from '../shared/bearer.js';

export type { BearerContext } from '../shared/bearer.js';

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
  /**
   * The resource (RFC 8707) the route belongs to, one of the server's `resources`: only tokens
   * issued for it are accepted, and every challenge names its protected resource metadata
   * (RFC 9728 5.1). Default: the default resource when the server declares one; else the route
   * takes tokens bound to no resource.
   *
   * @example 'https://example.com/mcp'
   */
  resource?: string;
  /** The `realm` of the `WWW-Authenticate` challenge; defaults to the base URL's host. */
  realm?: string;
  /**
   * Put the user's teams on the bearer context (`bearerOf(res).teams`): one more read of the
   * storage per request (`users.findClaims`). Default `false`.
   */
  teams?: boolean;
}

/**
 * Protects a route with an access token in the `Authorization: Bearer` header (RFC 6750 2.1; the
 * query and body forms are not accepted, and a request that also carries one of them is
 * `invalid_request`, RFC 6750 2). Missing, malformed, unknown, revoked or expired tokens get 401
 * with a `WWW-Authenticate` challenge; a token works for exactly `expires_in` seconds. When the
 * storage is unavailable the answer is 503 `temporarily_unavailable` with `Retry-After` and no
 * challenge, never 401: the token may well be valid.
 *
 * A client's own token (the client credentials grant) passes too, marked: `bearerOf(res).subject`
 * is `'client'` and its `userId` `null`; a route that acts for a member refuses it.
 *
 * @example
 * app.get('/v1/realms', requireBearer(server), (req, res: Response<unknown, BearerLocals>) => {
 *   const { userId } = res.locals.oauth;
 *   if (userId === null) return res.status(403).json({ error: 'This route acts for a member.' });
 *   res.json(realmsOf(userId));
 * });
 *
 * @see RFC 6750 sections 2, 2.1, 3, 3.1
 */
export function requireBearer(
  server: AuthorizationServer,
  options: RequireBearerOptions = {},
): RequestHandler {
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
  const resource = guardedResource(server, options.resource);
  return handle(
    server,
    endpoint<BearerStepContext>({
      name: 'bearer',
      method: 'GET',
      path: '*',
      kind: 'guard',
      steps: [
        ...bearerSteps({
          realm: options.realm ?? new URL(server.urls.base).host,
          scopes: required,
          resource,
        }),
        function pass(ctx) {
          const { bearer } = ctx;
          (ctx.res.locals as BearerLocals).oauth = bearer;
          if (!options.teams) {
            ctx.answer = { kind: 'next' };
            return;
          }
          // A client's own token has no member, and no teams.
          if (bearer.userId === null) {
            bearer.teams = [];
            ctx.answer = { kind: 'next' };
            return;
          }
          return teamsOf(server, bearer.userId).then((teams) => {
            bearer.teams = teams;
            ctx.answer = { kind: 'next' };
          });
        },
      ],
    }),
  );
}

/** The declared resource a guard is for: the one named, else the default one; `null` for none. */
function guardedResource(server: AuthorizationServer, uri: string | undefined): DeclaredResource | null {
  if (uri === undefined) return server.resources.fallback ?? null;
  const declared = findResource(server.resources, uri);
  if (declared === undefined) {
    const known = server.resources.all.map((r) => r.resource).join(', ') || 'none';
    throw new TypeError(
      `openid-oauth-bridge: requireBearer resource: ${JSON.stringify(uri)} is not one of the server's resources (${known}); declare it in the resources option`,
    );
  }
  return declared;
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
