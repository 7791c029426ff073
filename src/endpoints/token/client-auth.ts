import type { Request, Response } from 'express';
import { OAuthError } from '../../errors/oauth-error.js';
import { hashSecret, secretMatchesHash } from '../../crypto/secrets.js';
import { emit, eventContext } from '../../events/emit.js';
import type { ClientAuthenticationFailedEvent } from '../../events/types.js';
import { MAX_PARAM_LENGTH, optionalParam } from '../../http/params.js';
import type { AuthorizationServer } from '../../server.js';
import type { ClientRecord } from '../../storage/types.js';
import { clientAuthRateLimit } from './rate-limit.js';

/** Compared against when the client is unknown, so that case takes as long as a wrong secret. */
const UNKNOWN_CLIENT_HASH = hashSecret('unknown client');

/** `res.locals` of an endpoint that authenticates clients. */
export interface ClientAuthLocals {
  /** The request's form parameters, strictly parsed by the endpoint's first step. */
  params: Map<string, string>;
  /** The `client_id` presented (HTTP Basic or body), whether it authenticated or not. */
  presentedClientId?: string;
  /** The authenticated client. */
  client?: ClientRecord;
  /** Why authentication failed; thrown once the rate limit has counted it. */
  clientAuthFailure?: OAuthError;
}

/**
 * Client authentication for any endpoint that authenticates clients: verify the credentials
 * ({@link authenticateClient}), let the rate limit count a failure or refuse a limited client or
 * address with 429, then refuse a failure with 401 `invalid_client`. The form must already be in
 * `res.locals.params`. Resolves the client (also left in `res.locals.client`); rejects with the
 * error to answer.
 *
 * @example
 * const authenticate = clientAuthenticator(server, 'revocation');
 * router.post(path, async (req, res) => {
 *   await readFormRequest(form, req, res);
 *   res.locals.params = formParams(req.body);
 *   const client = await authenticate(req, res);
 * });
 */
export function clientAuthenticator(
  server: AuthorizationServer,
  endpoint: ClientAuthenticationFailedEvent['endpoint'] = 'token',
): (req: Request, res: Response) => Promise<ClientRecord> {
  const rateLimit = clientAuthRateLimit(server);
  return async (req, res) => {
    const locals = res.locals as ClientAuthLocals;
    // Malformed credentials throw here, before anything is counted.
    const basic = parseBasic(req.get('authorization'));
    try {
      locals.client = await verifyClient(server, req, locals.params, endpoint, basic);
    } catch (err) {
      if (!(err instanceof OAuthError && err.code === 'invalid_client')) throw err;
      locals.clientAuthFailure = err;
    }
    locals.presentedClientId = basic?.id ?? optionalParam(locals.params, 'client_id');
    if (rateLimit) await rateLimit(req, res);
    if (locals.clientAuthFailure) throw locals.clientAuthFailure;
    return locals.client!;
  };
}

/**
 * Authenticates the client (RFC 6749 2.3.1): `client_secret` in the form body (the spec) or HTTP
 * Basic, never both. An unknown client, a wrong secret, a disabled client and an implicit client
 * (it has no secret) all give the same `invalid_client`, reported as a
 * `client.authentication_failed` event of `endpoint`. Not rate limited by itself: endpoints use
 * {@link clientAuthenticator}.
 */
export async function authenticateClient(
  server: AuthorizationServer,
  req: Request,
  params: Map<string, string>,
  endpoint: ClientAuthenticationFailedEvent['endpoint'] = 'token',
): Promise<ClientRecord> {
  return verifyClient(server, req, params, endpoint, parseBasic(req.get('authorization')));
}

/** {@link authenticateClient} with the Authorization header already parsed. */
async function verifyClient(
  server: AuthorizationServer,
  req: Request,
  params: Map<string, string>,
  endpoint: ClientAuthenticationFailedEvent['endpoint'],
  basic: { id: string; secret: string } | undefined,
): Promise<ClientRecord> {
  const bodyId = optionalParam(params, 'client_id');
  const bodySecret = optionalParam(params, 'client_secret');
  if (basic && bodySecret !== undefined) {
    throw new OAuthError('invalid_request', 'Use one client authentication method, not both.');
  }
  if (basic && bodyId !== undefined && bodyId !== basic.id) {
    throw new OAuthError('invalid_request', 'client_id does not match the Authorization header.');
  }
  const id = basic?.id ?? bodyId;
  const secret = basic?.secret ?? bodySecret;
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

/** Decodes form-urlencoding; most ids and secrets have nothing to decode (no `%`, no `+`). */
function formDecode(value: string): string {
  if (!value.includes('%') && !value.includes('+')) return value;
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

/** RFC 6749 2.3.1: id and secret are form-urlencoded before they are joined with a colon. */
function parseBasic(header: string | undefined): { id: string; secret: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) throw new OAuthError('invalid_request', 'Malformed Authorization header.');
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw new OAuthError('invalid_request', 'Malformed Authorization header.');
  let id: string;
  let secret: string;
  try {
    id = formDecode(decoded.slice(0, colon));
    secret = formDecode(decoded.slice(colon + 1));
  } catch {
    throw new OAuthError('invalid_request', 'Malformed Authorization header.');
  }
  // The same bound as form parameters: an id becomes a rate-limit key.
  if (id.length > MAX_PARAM_LENGTH || secret.length > MAX_PARAM_LENGTH) {
    throw new OAuthError('invalid_request', 'Malformed Authorization header.');
  }
  return id && secret ? { id, secret } : undefined;
}
