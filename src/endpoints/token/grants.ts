import { redirectUriMatches } from '../../clients/redirect-uri.js';
import { OAuthError } from '../../errors/oauth-error.js';
import type { EventContext } from '../../events/emit.js';
import { exchangeCode, refreshAccessToken, type TokenResponse } from '../../grants/index.js';
import { optionalParam, requiredParam } from '../../http/params.js';
import type { AuthorizationServer } from '../../server.js';
import type { ClientRecord } from '../../storage/types.js';

/**
 * One grant type of the token endpoint: its parameters arrive strictly parsed and bounded;
 * `context` gives what goes into the events it reports (called only when an event has listeners).
 */
export type GrantHandler = (
  server: AuthorizationServer,
  client: ClientRecord,
  params: Map<string, string>,
  context?: () => EventContext,
) => Promise<TokenResponse>;

const noContext = (): EventContext => ({});

/** `grant_type=authorization_code` (RFC 6749 4.1.3, RFC 7636 4.5). */
const authorizationCode: GrantHandler = (server, client, params, context = noContext) => {
  const code = requiredParam(params, 'code');
  const redirectUri = requiredParam(params, 'redirect_uri');
  const codeVerifier = optionalParam(params, 'code_verifier');
  if (codeVerifier !== undefined && !/^[A-Za-z0-9\-._~]{43,128}$/.test(codeVerifier)) {
    throw new OAuthError('invalid_request', 'Malformed code_verifier.');
  }
  return exchangeCode(server, client, { code, redirectUri, codeVerifier }, context);
};

/**
 * `grant_type=refresh_token` (RFC 6749 6). RFC 6749 defines no `redirect_uri` for a refresh and
 * client libraries send none, so it is optional; one that is sent is still checked. The service
 * specification lists it: `tokens.requireRedirectUriOnRefresh` makes it required again.
 */
const refreshToken: GrantHandler = (server, client, params, context = noContext) => {
  const presented = requiredParam(params, 'refresh_token');
  const redirectUri = server.options.tokens.requireRedirectUriOnRefresh
    ? requiredParam(params, 'redirect_uri')
    : optionalParam(params, 'redirect_uri');
  if (redirectUri !== undefined && !redirectUriMatches(client.redirectUri, redirectUri)) {
    throw new OAuthError('invalid_grant', 'redirect_uri is not registered for this client.');
  }
  const scope = optionalParam(params, 'scope');
  return refreshAccessToken(server, client, { refreshToken: presented, scope }, context);
};

/** The grants of the token endpoint, keyed by `grant_type`. */
export const grants: Readonly<Record<string, GrantHandler>> = {
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
};
