import { hashSecret } from '../crypto/secrets.js';
import { OAuthError } from '../errors/oauth-error.js';
import { emit, listened, type EventContext } from '../events/emit.js';
import { requestedScopes } from '../rules/scopes.js';
import { ephemeralKeys } from '../storage/keys.js';
import type { ClientRecord, FoundTokenRecord, TokenRecord } from '../storage/types.js';
import { isPublicClient } from '../rules/client-kind.js';
import { narrowedResources, NO_RESOURCES } from '../rules/resources.js';
import type { GrantDeps } from './deps.js';
import { revokeGrant } from './grant.js';
import { admits, teamRefused, teamsOf } from './teams.js';
import {
  currentScopes,
  newAccessToken,
  newToken,
  saveAccessToken,
  tokenResponse,
  usable,
  type IssuedToken,
  type TokenResponse,
} from './tokens.js';

/** How long the commit marker of a rotation is kept: far longer than a rotation takes to finish. */
const ROTATION_MARKER_MS = 86_400_000;

const invalidToken = () => new OAuthError('invalid_grant', 'The refresh token is invalid.');

/**
 * The parameters of a refresh (RFC 6749 6), with the token as the request read it:
 * `tokens.find` of its hash (`null`: unknown).
 */
export interface RefreshExchange {
  refreshToken: string;
  found: FoundTokenRecord | null;
  scope: string | undefined;
  /** The `resource` the request names (RFC 8707 2.2): one the refresh token was issued for. */
  resource?: string;
}

/**
 * Exchanges a refresh token for a new access token (RFC 6749 6). By default the same refresh
 * token of a confidential client stays valid until revoked (the spec). With rotation (`tokens.rotateRefreshTokens`,
 * by default for public clients) a new one
 * replaces it: the new tokens are saved first and the rotation is committed last, by exactly one
 * of racing callers; the losers, and any later use of a replaced token, revoke the grant
 * (RFC 9700 4.14.2). A failure before the commit leaves the presented token as it was.
 */
export async function refreshAccessToken(
  deps: GrantDeps,
  client: ClientRecord,
  params: RefreshExchange,
  context: () => EventContext,
): Promise<TokenResponse> {
  const now = deps.clock();
  const hash = hashSecret(params.refreshToken);
  const { found } = params;
  if (!found || found.token.type !== 'refresh_token' || found.token.clientId !== client.clientId) {
    throw invalidToken();
  }
  if (!usable(found, now)) throw invalidToken();
  const presented = found.token;
  if (presented.rotatedAt !== null) {
    await reused(deps, presented, context);
    throw invalidToken();
  }
  // A client only some teams may use: the person's teams as their latest login said, checked at
  // every refresh (a gate added since, or a membership lost at a login since, takes effect here).
  if (client.allowedTeams?.length && !admits(client.allowedTeams, await teamsOf(deps, presented.userId))) {
    emit(deps, teamRefused(client, presented.userId, 'refresh', context()));
    throw new OAuthError('invalid_grant', 'The user is no longer a member of a team this client is for.');
  }
  // RFC 6749 6: a refresh may ask for fewer scopes, never more; and never more than the consent
  // and the client's current scopes still allow, as the operator may have narrowed either.
  const scopes = requestedScopes(
    params.scope,
    currentScopes(found),
    "The requested scope exceeds the one originally granted or the client's current scopes.",
  );
  // A token for no scope at all would not be what was granted, only a way to keep a session
  // alive: refused as a scope problem (RFC 6749 5.2), not as a bad token, since the refresh token
  // works again for any of its scopes the client is given back.
  if (scopes.length === 0 && presented.scopes.length > 0) {
    throw new OAuthError('invalid_scope', 'None of the scopes originally granted remains with this client.');
  }
  // RFC 8707 2.2: an access token for one of the refresh token's resources, never another.
  const resources = narrowedResources(deps.resources ?? NO_RESOURCES, client, presented.resources ?? [], {
    value: params.resource,
    repeated: false,
  });
  const subject = {
    clientId: client.clientId,
    userId: presented.userId,
    scopes,
    grantId: presented.grantId,
    ...(resources.length ? { resources } : {}),
  };
  let access: IssuedToken;
  let refreshToken = params.refreshToken;
  const rotation = deps.options.tokens.rotateRefreshTokens;
  if (rotation === true || (rotation === 'public-clients' && isPublicClient(client))) {
    access = await newAccessToken(deps, subject, 'refresh_token', now);
    // RFC 6749 6: the new refresh token has the scope of the one it replaces; every refresh
    // narrows what it grants to what the consent and the client still allow.
    const next = newToken(
      deps,
      'refresh_token',
      { ...subject, scopes: presented.scopes, resources: presented.resources },
      'refresh_token',
      now,
    );
    // The tokens first, the rotation marker (the commit point) last: exactly one of racing
    // refreshes adds it. The replaced token is then marked before anything is handed out, so
    // reuse is detected for as long as the token lives, not only while the marker does: if
    // marking fails, the request fails and the new tokens are never seen (a retry finds the
    // marker and revokes the grant: fail closed, RFC 9700 4.14.2).
    await deps.storage.tokens.save(access.record);
    await deps.storage.tokens.save(next.record);
    const marker = ephemeralKeys.rotated(hash);
    const added = await deps.storage.ephemeral.add(
      marker,
      next.record.tokenHash,
      now + ROTATION_MARKER_MS,
      now,
    );
    if (!added) {
      await reused(deps, presented, context);
      throw invalidToken();
    }
    await deps.storage.tokens.save({ ...presented, rotatedAt: now });
    refreshToken = next.token;
  } else {
    access = await saveAccessToken(deps, subject, 'refresh_token', now);
  }
  if (listened(deps, 'token.refreshed')) {
    const rotated = refreshToken !== params.refreshToken;
    emit(deps, { type: 'token.refreshed', ...subject, rotated, ...context() });
  }
  return tokenResponse(access, deps, refreshToken);
}

/**
 * A replaced refresh token presented again has leaked: end the whole grant and report it, once:
 * of requests presenting it at once, the one {@link revokeGrant} elects reports it.
 */
async function reused(deps: GrantDeps, token: TokenRecord, context: () => EventContext): Promise<void> {
  if (!(await revokeGrant(deps, token))) return;
  const { clientId, userId, grantId } = token;
  emit(deps, { type: 'refresh_token.reused', clientId, userId, grantId, ...context() });
}
