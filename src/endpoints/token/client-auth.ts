import type { Request } from 'express';
import { OAuthError } from '../../errors/oauth-error.js';
import { hashSecret, secretMatchesHash } from '../../crypto/secrets.js';
import { emit, eventContext } from '../../events/emit.js';
import type { ClientAuthenticationFailedEvent } from '../../events/types.js';
import { optionalParam } from '../../http/params.js';
import type { AuthorizationServer } from '../../server.js';
import type { ClientRecord } from '../../storage/types.js';

/** Compared against when the client is unknown, so that case takes as long as a wrong secret. */
const UNKNOWN_CLIENT_HASH = hashSecret('unknown client');

/**
 * Authenticates the client (RFC 6749 2.3.1): `client_secret` in the form body (the spec) or HTTP
 * Basic, never both. An unknown client, a wrong secret, a disabled client and an implicit client
 * (it has no secret) all give the same `invalid_client`, reported as a
 * `client.authentication_failed` event of `endpoint`.
 */
export async function authenticateClient(
  server: AuthorizationServer,
  req: Request,
  params: Map<string, string>,
  endpoint: ClientAuthenticationFailedEvent['endpoint'] = 'token',
): Promise<ClientRecord> {
  const basic = parseBasic(req.get('authorization'));
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

/** RFC 6749 2.3.1: id and secret are form-urlencoded before they are joined with a colon. */
function parseBasic(header: string | undefined): { id: string; secret: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) throw new OAuthError('invalid_request', 'Malformed Authorization header.');
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw new OAuthError('invalid_request', 'Malformed Authorization header.');
  try {
    const id = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
    const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    return id && secret ? { id, secret } : undefined;
  } catch {
    throw new OAuthError('invalid_request', 'Malformed Authorization header.');
  }
}
