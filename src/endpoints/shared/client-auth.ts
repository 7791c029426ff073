import type { Request } from 'express';
import type { AuthorizationServer } from '../../config/server.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { hashSecret, secretMatchesHash } from '../../crypto/secrets.js';
import { emit, eventContext } from '../../events/emit.js';
import type { ClientAuthenticationFailedEvent } from '../../events/types.js';
import type { FormContext } from '../../http/form.js';
import { optionalParam } from '../../http/params.js';
import type { ClientRecord } from '../../storage/types.js';
import { parseBasic } from './client-credentials.js';
import { limitClientAuthFailures } from './client-rate-limit.js';

/** Compared against when the client is unknown, so that case takes as long as a wrong secret. */
const UNKNOWN_CLIENT_HASH = hashSecret('unknown client');

/** The context of an endpoint that authenticates clients (token, revocation, introspection). */
export interface ClientContext extends FormContext {
  /** The authenticated client, once {@link authenticateClient} has run. */
  client: ClientRecord;
  /** The `client_id` the request presents (HTTP Basic or body), whether it authenticates or not. */
  presentedClientId?: string;
  /** Why authentication failed; thrown once the rate limit has counted it. */
  authFailure?: OAuthError;
}

/**
 * Step: authenticate the client ({@link verifyClient}). A failure is kept, not thrown, so that
 * {@link limitFailures} counts it first; malformed credentials are refused at once.
 */
export function authenticateClient(ctx: ClientContext): Promise<void> {
  const { server, req, params } = ctx;
  const { id, secret } = presentedCredentials(req, params);
  ctx.presentedClientId = id;
  return verifyClient(server, req, ctx.endpoint.name as AuthEndpoint, id, secret).then(
    (client) => {
      ctx.client = client;
    },
    (err: unknown) => {
      if (!(err instanceof OAuthError && err.code === 'invalid_client')) throw err;
      ctx.authFailure = err;
    },
  );
}

/**
 * Step of the revocation endpoint: a public client (registered for the implicit grant, it has no
 * secret) names itself with `client_id` alone, to revoke its own tokens (RFC 7009 section 5);
 * every other client authenticates ({@link authenticateClient}).
 */
export async function authenticateOrNamePublicClient(ctx: ClientContext): Promise<void> {
  const { server, req, params } = ctx;
  const presentsSecret = req.get('authorization') !== undefined || params.has('client_secret');
  const id = optionalParam(params, 'client_id');
  if (!presentsSecret && id !== undefined) {
    const client = await server.storage.clients.find(id);
    if (client && !client.disabled && client.grantType === 'implicit') {
      ctx.client = client;
      ctx.presentedClientId = id;
      return;
    }
  }
  return authenticateClient(ctx);
}

/**
 * Step: the rate limits on failed client authentications count a failure, or refuse a client or
 * address over its limit with 429 ({@link limitClientAuthFailures}); then a failure is refused
 * with 401 `invalid_client`.
 */
export function limitFailures(ctx: ClientContext): void | Promise<void> {
  const limited = limitClientAuthFailures(
    ctx.server,
    ctx.req,
    ctx.presentedClientId,
    ctx.authFailure !== undefined,
  );
  if (limited === undefined) return throwFailure(ctx);
  return limited.then(() => throwFailure(ctx));
}

function throwFailure(ctx: ClientContext): void {
  if (ctx.authFailure) throw ctx.authFailure;
}

type AuthEndpoint = ClientAuthenticationFailedEvent['endpoint'];

/**
 * The credentials a request presents (RFC 6749 2.3.1): `client_secret` in the form body (the
 * spec) or HTTP Basic, never both; `invalid_request` for both, or for ids that differ.
 */
function presentedCredentials(
  req: Request,
  params: Map<string, string>,
): { id: string | undefined; secret: string | undefined } {
  const basic = parseBasic(req.get('authorization'));
  const bodyId = optionalParam(params, 'client_id');
  const bodySecret = optionalParam(params, 'client_secret');
  if (basic && bodySecret !== undefined) {
    throw new OAuthError('invalid_request', 'Use one client authentication method, not both.');
  }
  if (basic && bodyId !== undefined && bodyId !== basic.id) {
    throw new OAuthError('invalid_request', 'client_id does not match the Authorization header.');
  }
  return { id: basic?.id ?? bodyId, secret: basic?.secret ?? bodySecret };
}

/**
 * Authenticates the client by its presented id and secret. An unknown client, a missing or
 * wrong secret, a disabled client and an implicit client (it has no secret) all give the same
 * `invalid_client`, reported as a `client.authentication_failed` event of `endpoint`.
 */
async function verifyClient(
  server: AuthorizationServer,
  req: Request,
  endpoint: AuthEndpoint,
  id: string | undefined,
  secret: string | undefined,
): Promise<ClientRecord> {
  const failed = () => {
    const presented = id === undefined ? {} : { clientId: id };
    emit(server, { type: 'client.authentication_failed', ...presented, endpoint, ...eventContext(req) });
    return invalidClient(server);
  };
  if (id === undefined || secret === undefined) throw failed();

  const client = await server.storage.clients.find(id);
  const matches = secretMatchesHash(secret, client?.secretHash ?? UNKNOWN_CLIENT_HASH);
  if (!client || !matches || client.disabled || client.grantType !== 'authorization_code') {
    throw failed();
  }
  return client;
}

/** RFC 6749 5.2: 401 with a `WWW-Authenticate` challenge (Basic, the scheme RFC 6749 2.3.1 requires). */
function invalidClient(server: AuthorizationServer): OAuthError {
  return new OAuthError('invalid_client', 'Client authentication failed.', {
    headers: { 'WWW-Authenticate': `Basic realm="${new URL(server.urls.base).host}"` },
  });
}
