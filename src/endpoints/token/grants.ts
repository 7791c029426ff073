import { createHash } from 'node:crypto';
import { redirectUriMatches } from '../../clients/redirect-uri.js';
import { generateSecret, hashSecret } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, listened, type EventContext } from '../../events/emit.js';
import { optionalParam, requiredParam } from '../../http/params.js';
import { requestedScopes } from '../../scopes/scopes.js';
import type { AuthorizationServer } from '../../server.js';
import type { ClientRecord, RefreshTokenRecord } from '../../storage/types.js';
import {
  issueAccessToken,
  issueRefreshToken,
  tokenResponse,
  type TokenResponse,
} from '../../tokens/issue.js';

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

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/**
 * `grant_type=authorization_code` (RFC 6749 4.1.3). The code is consumed atomically before any
 * check that depends on it, so two racing requests cannot both succeed; a second use revokes
 * every token issued from the first (RFC 6749 4.1.2).
 */
const authorizationCode: GrantHandler = async (server, client, params, context = noContext) => {
  const code = requiredParam(params, 'code');
  const redirectUri = requiredParam(params, 'redirect_uri');
  const verifier = optionalParam(params, 'code_verifier');
  if (verifier !== undefined && !/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) {
    throw new OAuthError('invalid_request', 'Malformed code_verifier.');
  }
  const now = server.clock();
  const consumption = await server.storage.codes.consume(hashSecret(code), now);
  if (!consumption) throw invalidGrant('The authorization code is invalid.');
  const record = consumption.code;
  if (consumption.status === 'replayed') {
    const tokensRevoked = await server.storage.tokens.revokeGrant(record.grantId, now);
    emit(server, {
      type: 'code.replayed',
      clientId: record.clientId,
      presentedBy: client.clientId,
      userId: record.userId,
      grantId: record.grantId,
      tokensRevoked,
      ...context(),
    });
    throw invalidGrant('The authorization code has already been used.');
  }
  if (record.clientId !== client.clientId)
    throw invalidGrant('The authorization code was issued to another client.');
  if (now >= record.expiresAt) throw invalidGrant('The authorization code has expired.');
  if (record.redirectUri !== redirectUri) {
    throw invalidGrant('redirect_uri differs from the one of the authorization request.');
  }
  if (record.codeChallenge !== null) {
    if (verifier === undefined) throw invalidGrant('code_verifier is required for this code.');
    const computed = createHash('sha256').update(verifier).digest('base64url');
    if (computed !== record.codeChallenge) throw invalidGrant('code_verifier does not match.');
  } else if (verifier !== undefined) {
    // RFC 9700 4.8.2: a verifier for a code issued without a challenge is a downgrade attempt.
    throw invalidGrant('This code was issued without a code_challenge.');
  } else if (client.requirePkce) {
    throw invalidGrant('This client must use PKCE.');
  }
  const subject = {
    clientId: client.clientId,
    userId: record.userId,
    scopes: record.scopes,
    grantId: record.grantId,
  };
  const access = await issueAccessToken(server, subject, 'authorization_code');
  const refresh = await issueRefreshToken(server, subject);
  if (listened(server, 'token.issued')) {
    emit(server, {
      type: 'token.issued',
      grantType: 'authorization_code',
      ...subject,
      refreshToken: true,
      ...context(),
    });
  }
  return tokenResponse(access, record.scopes, refresh);
};

/**
 * `grant_type=refresh_token` (RFC 6749 6). By default the same refresh token stays valid until
 * revoked (the spec); with `tokens.rotateRefreshTokens` a new one replaces it and reuse of an old
 * one revokes the grant (RFC 9700 4.14.2).
 */
const refreshToken: GrantHandler = async (server, client, params, context = noContext) => {
  const presented = requiredParam(params, 'refresh_token');
  const redirectUri = requiredParam(params, 'redirect_uri');
  if (!redirectUriMatches(client.redirectUri, redirectUri)) {
    throw invalidGrant('redirect_uri is not registered for this client.');
  }
  const now = server.clock();
  const hash = hashSecret(presented);
  const record = await server.storage.tokens.findRefreshToken(hash);
  if (
    !record ||
    record.clientId !== client.clientId ||
    (record.expiresAt !== null && now >= record.expiresAt)
  ) {
    throw invalidGrant('The refresh token is invalid.');
  }
  if (record.rotatedAt !== null) {
    // A rotated-away token presented again has leaked (RFC 9700 4.14.2): end the whole grant.
    await revokeReused(server, record, now, context);
    throw invalidGrant('The refresh token is invalid.');
  }
  // RFC 6749 6: a refresh may ask for fewer scopes, never more.
  const scopes = requestedScopes(
    optionalParam(params, 'scope'),
    record.scopes,
    'The requested scope exceeds the one originally granted.',
  );
  const subject = { clientId: client.clientId, userId: record.userId, scopes, grantId: record.grantId };
  let refresh = presented;
  if (server.options.tokens.rotateRefreshTokens) {
    refresh = generateSecret();
    const next = {
      ...subject,
      scopes: record.scopes,
      tokenHash: hashSecret(refresh),
      createdAt: now,
      expiresAt: null,
      rotatedAt: null,
    };
    const rotation = await server.storage.tokens.rotateRefreshToken(hash, next, now);
    if (rotation !== 'rotated') {
      if (rotation === 'reused') await revokeReused(server, record, now, context);
      throw invalidGrant('The refresh token is invalid.');
    }
  }
  const access = await issueAccessToken(server, subject, 'refresh_token');
  const rotated = refresh !== presented;
  if (listened(server, 'token.refreshed')) {
    emit(server, { type: 'token.refreshed', ...subject, rotated, ...context() });
  }
  return tokenResponse(access, scopes, refresh);
};

/** Revokes the grant of a leaked refresh token and reports it. */
async function revokeReused(
  server: AuthorizationServer,
  record: RefreshTokenRecord,
  now: number,
  context: () => EventContext,
): Promise<void> {
  const tokensRevoked = await server.storage.tokens.revokeGrant(record.grantId, now);
  const { clientId, userId, grantId } = record;
  emit(server, { type: 'refresh_token.reused', clientId, userId, grantId, tokensRevoked, ...context() });
}

/** The grants of the token endpoint, keyed by `grant_type`. */
export const grants: Readonly<Record<string, GrantHandler>> = {
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
};
