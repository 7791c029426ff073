import { randomId } from '../crypto/secrets.js';
import { OAuthError } from '../errors/oauth-error.js';
import { emit, listened, type EventContext } from '../events/emit.js';
import { ephemeralKeys } from '../storage/keys.js';
import type { ClientRecord, GrantRecord } from '../storage/types.js';
import type { GrantDeps } from './deps.js';
import { clientSubject, recordConsent } from './grant.js';
import { markUsed, saveAccessToken, tokenResponse, type Subject, type TokenResponse } from './tokens.js';

/**
 * The client credentials grant (RFC 6749 4.4): a confidential client registered for it asks for an
 * access token for itself, for no member. There is no user and no consent; the token's subject is
 * the client.
 *
 * Its tokens belong to a grant of the client's own, as every other token belongs to a grant: the
 * grant of the client's subject (`client:<client_id>`, {@link clientSubject}) and the client,
 * started at its first token. So every rule on tokens holds unchanged, on one path: a token works
 * only with its standing grant and its client in service (`usable`); revoking one of its tokens
 * (RFC 7009) revokes the grant and with it every token of the client, and its next request starts
 * a new grant; disabling the client stops them; removing it deletes the grant; `prune` and the
 * storage contract see nothing new. What tells a client's token apart is its `origin`,
 * `client_credentials` ({@link tokenSubject}).
 */

/** How long the id of a client's next grant is kept: far longer than racing first requests take. */
const GRANT_ELECTION_MS = 600_000;

/** A client credentials request: the scopes and resources, as checked by the token endpoint. */
export interface ClientCredentialsRequest {
  scopes: string[];
  /** The resource (RFC 8707) the token is for; absent or empty: none. */
  resources?: string[];
}

/**
 * Issues the client's own access token (RFC 6749 4.4.3): no refresh token (4.4.3: "A refresh
 * token SHOULD NOT be included"), reported as a `token.issued` event of grant type
 * `client_credentials`. The client must have been checked: registered for the grant,
 * authenticated, in service.
 */
export async function issueClientToken(
  deps: GrantDeps,
  client: ClientRecord,
  request: ClientCredentialsRequest,
  context: () => EventContext,
): Promise<TokenResponse> {
  const grant = await clientGrant(deps, client, request);
  const subject: Subject = {
    clientId: client.clientId,
    userId: grant.userId,
    scopes: request.scopes,
    grantId: grant.grantId,
    ...(request.resources?.length ? { resources: request.resources } : {}),
  };
  await markUsed(deps, client);
  const access = await saveAccessToken(deps, subject, 'client_credentials', deps.clock());
  if (listened(deps, 'token.issued')) {
    emit(deps, {
      type: 'token.issued',
      grantType: 'client_credentials',
      ...subject,
      refreshToken: false,
      ...context(),
    });
  }
  return tokenResponse(access, deps);
}

/**
 * The client's own standing grant, holding the scopes and resources asked for: the one that stands
 * (one read, the usual case), extended when it lacks some, or a new one after a revocation or at
 * the first request. The id of a new grant is chosen once (`ephemeral.add`, exactly one of racing
 * requests adds it) and saved by each of them, so that a bot's workers starting at once share one
 * grant, and no token is issued under a grant another request replaced. The save is
 * {@link recordConsent}'s: a revocation or a removal of the client racing it wins.
 */
async function clientGrant(
  deps: GrantDeps,
  client: ClientRecord,
  request: ClientCredentialsRequest,
): Promise<GrantRecord> {
  const { clientId } = client;
  const userId = clientSubject(clientId);
  const resources = request.resources ?? [];
  const [latest] = await deps.storage.grants.list({ userId, clientId });
  const standing = latest !== undefined && latest.revokedAt === null ? latest : undefined;
  if (
    standing &&
    request.scopes.every((scope) => standing.scopes.includes(scope)) &&
    resources.every((resource) => standing.resources?.includes(resource))
  ) {
    return standing;
  }
  let grantId: string | undefined;
  if (!standing) {
    const now = deps.clock();
    // What the new grant follows: the revoked one, or the client's registration (a client
    // registered again under the same id is told apart by its creation time).
    const basis = latest?.grantId ?? `registered:${client.createdAt}`;
    const key = ephemeralKeys.clientGrant(clientId, basis);
    const proposed = randomId();
    const added = await deps.storage.ephemeral.add(key, proposed, now + GRANT_ELECTION_MS, now);
    grantId = added ? proposed : ((await deps.storage.ephemeral.get(key, now)) ?? proposed);
  }
  try {
    const { grant } = await recordConsent(deps, userId, clientId, request.scopes, client, resources, grantId);
    return grant;
  } catch (err) {
    // A revocation or a removal of the client won the race: the grant is gone (RFC 6749 5.2).
    if (err instanceof OAuthError && err.code === 'access_denied') {
      throw new OAuthError('invalid_grant', err.description);
    }
    throw err;
  }
}
