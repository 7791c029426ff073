import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { hashSecret } from '../crypto/secrets.js';
import { OAuthError, toOAuthError } from '../errors/oauth-error.js';
import { reportServerError } from '../events/emit.js';
import { reportFailure } from '../errors/report.js';
import type { AuthorizationServer } from '../server.js';
import { usable } from '../grants/tokens.js';
import type { FoundTokenRecord } from '../storage/types.js';

/** What a handler behind {@link requireBearer} knows about the caller. */
export interface BearerContext {
  userId: string;
  clientId: string;
  scopes: readonly string[];
  /** Epoch milliseconds after which the token stops working. */
  expiresAt: number;
}

/** `res.locals` behind {@link requireBearer}: `Response<Body, BearerLocals>`. */
export interface BearerLocals {
  oauth: BearerContext;
}

export interface RequireBearerOptions {
  /** Every one of these scopes must have been granted, else 403 `insufficient_scope`. */
  scopes?: readonly string[];
  /** The `realm` of the `WWW-Authenticate` challenge; defaults to the base URL's host. */
  realm?: string;
}

/** The scheme is Bearer, whatever follows. */
const NAMES_BEARER = /^bearer(\s|$)/i;

/** RFC 6750 2.1 b64token after the scheme, which is matched case-insensitively. */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Protects a route with an access token in the `Authorization: Bearer` header (RFC 6750 2.1; the
 * query and body forms are not accepted). Missing, malformed, unknown, revoked or expired tokens
 * get 401 with a `WWW-Authenticate` challenge; a token works for exactly `expires_in` seconds.
 * When the storage is unavailable the answer is 503 `temporarily_unavailable` with
 * `Retry-After` and no challenge, never 401: the token may well be valid.
 *
 * @example
 * app.get('/v1/realms', requireBearer(server), (req, res: Response<unknown, BearerLocals>) => {
 *   res.json(realmsOf(res.locals.oauth.userId));
 * });
 *
 * @see RFC 6750 sections 2.1, 3, 3.1
 */
export function requireBearer(
  server: AuthorizationServer,
  options: RequireBearerOptions = {},
): RequestHandler {
  const realm = (options.realm ?? new URL(server.urls.base).host).replace(/["\\]/g, '');
  const required = options.scopes ?? [];
  const challenge = (error?: OAuthError) =>
    error
      ? `Bearer realm="${realm}", error="${error.code}", error_description="${error.description}"` +
        (required.length && error.code === 'insufficient_scope' ? `, scope="${required.join(' ')}"` : '')
      : `Bearer realm="${realm}"`;

  const problemWith = (found: FoundTokenRecord | null): OAuthError | undefined => {
    if (!found || found.token.type !== 'access_token' || !usable(found, server.clock())) {
      return new OAuthError('invalid_token', 'The access token is invalid or has expired.');
    }
    const token = found.token;
    if (!required.every((scope) => token.scopes.includes(scope))) {
      return new OAuthError('insufficient_scope', 'The access token lacks a required scope.');
    }
    return undefined;
  };
  const refuse = (req: Request, res: Response, next: NextFunction, err: unknown): void => {
    try {
      const error = toOAuthError(err);
      reportFailure(server, error, req, res);
      reportServerError(server, req, 'bearer', error);
      // A 5xx carries no challenge: nothing is said about the token, so the client keeps it. A
      // storage outage is 503 with Retry-After, never 401, which would make clients drop tokens.
      const headers = error.status >= 500 ? error.headers : { 'WWW-Authenticate': challenge(error) };
      res.status(error.status).set(headers).json(error.toJSON());
    } catch (failed) {
      next(failed);
    }
  };

  // Not an async function: on the path of every API call, one promise (the lookup's) instead of
  // three (the function's, the await's, and the one Express chains on a returned promise).
  return function requireBearerToken(req: Request, res: Response, next: NextFunction): void {
    const header = req.headers.authorization;
    if (header === undefined || !NAMES_BEARER.test(header)) {
      // RFC 6750 3.1: no error code when the request has no authentication at all.
      res.status(401).set('WWW-Authenticate', challenge()).end();
      return;
    }
    const match = BEARER.exec(header);
    if (!match) {
      return refuse(req, res, next, new OAuthError('invalid_token', 'The access token is malformed.'));
    }
    let lookup: Promise<FoundTokenRecord | null>;
    try {
      lookup = server.storage.tokens.find(hashSecret(match[1]!));
      // An adapter written in JavaScript may answer without a promise.
      if (typeof lookup?.then !== 'function') lookup = Promise.resolve(lookup);
    } catch (err) {
      // An adapter that throws instead of rejecting.
      return refuse(req, res, next, err);
    }
    lookup.then(
      (found) => {
        try {
          const problem = problemWith(found);
          if (problem) return refuse(req, res, next, problem);
          const { userId, clientId, scopes, expiresAt } = found!.token;
          (res.locals as BearerLocals).oauth = { userId, clientId, scopes, expiresAt: expiresAt! };
        } catch (err) {
          return refuse(req, res, next, err);
        }
        // Outside the try, so the request is never answered twice; Express catches what the next
        // handler throws.
        next();
      },
      (err: unknown) => refuse(req, res, next, err),
    );
  };
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
