import { redirectUriMatches } from '../../clients/redirect-uri.js';
import { OAuthError } from '../../errors/oauth-error.js';
import type { EventContext } from '../../events/emit.js';
import { exchangeCode, refreshAccessToken, type TokenResponse } from '../../grants/index.js';
import { accessTokenAhead, type AccessTokenAhead } from '../../grants/tokens.js';
import { optionalParam, requiredParam } from '../../http/params.js';
import type { AuthorizationServer } from '../../server.js';
import { hashSecret } from '../../crypto/secrets.js';
import type { GrantDeps } from '../../grants/deps.js';
import { ephemeralKeys } from '../../storage/keys.js';
import type { ReadOperation } from '../../storage/read-ahead.js';
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
  deps?: GrantDeps,
  /** What was written ahead with the reads ({@link GrantAhead}), and whether it was written. */
  ahead?: AccessTokenAhead & { saved: boolean },
) => Promise<TokenResponse>;

/**
 * What a grant type reads first, known from its parameters (read ahead with the client), and,
 * when `writeAhead` (the storage's batch is one round trip and the client is named), what it
 * writes in the same batch, handed out only once its checks pass.
 */
export type GrantFirst = (
  server: AuthorizationServer,
  params: Map<string, string>,
  now: number,
  writeAhead: { clientId: string } | undefined,
) => { reads: ReadOperation[]; ahead?: AccessTokenAhead };

const noContext = (): EventContext => ({});

/** `grant_type=authorization_code` (RFC 6749 4.1.3, RFC 7636 4.5). */
const authorizationCode: GrantHandler = (server, client, params, context = noContext, deps = server) => {
  const code = requiredParam(params, 'code');
  const redirectUri = requiredParam(params, 'redirect_uri');
  const codeVerifier = optionalParam(params, 'code_verifier');
  if (codeVerifier !== undefined && !/^[A-Za-z0-9\-._~]{43,128}$/.test(codeVerifier)) {
    throw new OAuthError('invalid_request', 'Malformed code_verifier.');
  }
  return exchangeCode(deps, client, { code, redirectUri, codeVerifier }, context);
};

/**
 * `grant_type=refresh_token` (RFC 6749 6). RFC 6749 defines no `redirect_uri` for a refresh and
 * client libraries send none, so it is optional; one that is sent is still checked. The service
 * specification lists it: `tokens.requireRedirectUriOnRefresh` makes it required again.
 */
const refreshToken: GrantHandler = (server, client, params, context = noContext, deps = server, ahead) => {
  const presented = requiredParam(params, 'refresh_token');
  const redirectUri = server.options.tokens.requireRedirectUriOnRefresh
    ? requiredParam(params, 'redirect_uri')
    : optionalParam(params, 'redirect_uri');
  if (redirectUri !== undefined && !redirectUriMatches(client.redirectUri, redirectUri)) {
    throw new OAuthError('invalid_grant', 'redirect_uri is not registered for this client.');
  }
  const scope = optionalParam(params, 'scope');
  return refreshAccessToken(deps, client, { refreshToken: presented, scope }, context, ahead);
};

/** The grants of the token endpoint, keyed by `grant_type`, with what each reads (and writes) first. */
export const grants: Readonly<Record<string, { handle: GrantHandler; first: GrantFirst }>> = {
  authorization_code: {
    handle: authorizationCode,
    first: (_server, params, now) => {
      const code = params.get('code');
      if (code === undefined) return { reads: [] };
      return { reads: [{ op: 'ephemeral.get', key: ephemeralKeys.code(hashSecret(code)), now }] };
    },
  },
  refresh_token: {
    handle: refreshToken,
    // With the read of the refresh token, its access token, saved from it: one round trip on
    // PostgreSQL. Not with rotation, whose writes end in a commit point of their own.
    first: (server, params, now, writeAhead) => {
      const token = params.get('refresh_token');
      if (token === undefined) return { reads: [] };
      const tokenHash = hashSecret(token);
      const reads: ReadOperation[] = [{ op: 'tokens.find', tokenHash }];
      if (writeAhead === undefined || server.options.tokens.rotateRefreshTokens) return { reads };
      return { reads, ahead: accessTokenAhead(server, tokenHash, writeAhead.clientId, now) };
    },
  },
};
