import { OAuthError } from '../errors/oauth-error.js';
import { generateSecret, hashSecret } from '../crypto/secrets.js';
import type { ClientRecord, FoundTokenRecord, GrantRecord, TokenRecord } from '../storage/types.js';
import type { GrantDeps } from './deps.js';
import { inService } from '../rules/client-kind.js';
import { emit, listened, type EventContext } from '../events/emit.js';
import { findResource } from '../rules/resources.js';
import { signAccessToken } from '../oidc/access-token.js';

/** The JSON of a successful token response (RFC 6749 5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope?: string;
  /** OpenID Connect: the ID token of a code exchange that granted `openid`. */
  id_token?: string;
}

/** Who a token is for and under which grant. */
export interface Subject {
  clientId: string;
  /** The user; for a client's own token (client credentials), the client's own subject, `client:<client_id>`. */
  userId: string;
  scopes: string[];
  grantId: string;
  /** The resources (RFC 8707) the tokens are for; absent or empty: none. */
  resources?: string[];
}

/** A token just saved: its plaintext, shown once, and its record. */
export interface IssuedToken {
  token: string;
  record: TokenRecord;
}

/**
 * A new token of `type`, opaque, not saved yet: its plaintext, shown once, and its record. An
 * access token lives as long as its resources say ({@link accessTokenTtl}); a refresh token until
 * revoked (the spec). An access token is made by {@link newAccessToken}, which chooses its format.
 */
export function newToken(
  deps: GrantDeps,
  type: TokenRecord['type'],
  subject: Subject,
  origin: TokenRecord['origin'],
  now: number,
): IssuedToken {
  const token = generateSecret();
  return { token, record: tokenRecord(deps, token, type, subject, origin, now) };
}

/** The record of `token`: what it is for, and its hash, the one key it is found by. */
function tokenRecord(
  deps: GrantDeps,
  token: string,
  type: TokenRecord['type'],
  subject: Subject,
  origin: TokenRecord['origin'],
  now: number,
): TokenRecord {
  // Every field written out rather than spread (see bench/README.md).
  const record: TokenRecord = {
    clientId: subject.clientId,
    userId: subject.userId,
    scopes: subject.scopes,
    grantId: subject.grantId,
    tokenHash: hashSecret(token),
    type,
    createdAt: now,
    expiresAt: type === 'access_token' ? now + accessTokenTtl(deps, subject.resources) * 1000 : null,
    origin,
    rotatedAt: null,
  };
  if (subject.resources?.length) record.resources = subject.resources;
  return record;
}

/**
 * A new access token, not saved yet: opaque, or a JWT access token (RFC 9068) when every resource
 * it is for asks for one (`accessTokenFormat: 'jwt'`). Either way it has a record, found by the
 * hash of the token as presented, so revocation, introspection and the end of its grant or client
 * hold for both alike. `authTime` (epoch ms), when the sign-in is known, goes into a JWT's
 * `auth_time`.
 */
export async function newAccessToken(
  deps: GrantDeps,
  subject: Subject,
  origin: TokenRecord['origin'],
  now: number,
  authTime?: number,
): Promise<IssuedToken> {
  if (!isJwtFor(deps, subject.resources)) return newToken(deps, 'access_token', subject, origin, now);
  const expiresAt = now + accessTokenTtl(deps, subject.resources) * 1000;
  const token = await signAccessToken(deps, {
    sub: tokenSubject({ origin, userId: subject.userId, clientId: subject.clientId }).sub,
    clientId: subject.clientId,
    scopes: subject.scopes,
    resources: subject.resources!,
    issuedAt: now,
    expiresAt,
    authTime,
  });
  return { token, record: tokenRecord(deps, token, 'access_token', subject, origin, now) };
}

/** Whether the access token for `resources` is a JWT: each of them is declared and asks for one. */
function isJwtFor(deps: GrantDeps, resources: readonly string[] | undefined): boolean {
  if (!resources?.length || !deps.resources) return false;
  const declared = deps.resources;
  return resources.every((uri) => findResource(declared, uri)?.accessTokenFormat === 'jwt');
}

/**
 * The lifetime in seconds of an access token for `resources`: the shortest their declarations
 * give (`accessTokenTtl`), else `tokens.accessTokenTtl`.
 */
export function accessTokenTtl(deps: GrantDeps, resources: readonly string[] | undefined): number {
  const fallback = deps.options.tokens.accessTokenTtl;
  if (!resources?.length || !deps.resources) return fallback;
  let ttl = Number.POSITIVE_INFINITY;
  for (const uri of resources)
    ttl = Math.min(ttl, findResource(deps.resources, uri)?.accessTokenTtl ?? fallback);
  return ttl;
}

/** Saves a new access token; resolves its plaintext, shown once, and its record. */
export async function saveAccessToken(
  deps: GrantDeps,
  subject: Subject,
  origin: TokenRecord['origin'],
  now: number,
  authTime?: number,
): Promise<IssuedToken> {
  const issued = await newAccessToken(deps, subject, origin, now, authTime);
  await deps.storage.tokens.save(issued.record);
  return issued;
}

/** The seconds an issued access token lives: its `expires_in` (RFC 6749 5.1). */
export function expiresIn(record: Pick<TokenRecord, 'createdAt' | 'expiresAt'>): number {
  return Math.round((record.expiresAt! - record.createdAt) / 1000);
}

/**
 * Whom a token speaks for: a user (`kind: 'user'`, `sub` the user's id: the library's, or the
 * host's account id), or the client itself (`kind: 'client'`, `sub` its `client_id`): an access
 * token of the client credentials grant, which no member authorized. Read from the token's
 * `origin`, set when it was issued: where a token is issued or read (introspection,
 * `requireBearer`, a self-contained token's claims), this is the one place that tells them apart.
 */
export function tokenSubject(token: Pick<TokenRecord, 'origin' | 'userId' | 'clientId'>): TokenSubject {
  return token.origin === 'client_credentials'
    ? { kind: 'client', sub: token.clientId }
    : { kind: 'user', sub: token.userId };
}

/** What {@link tokenSubject} says of a token. */
export interface TokenSubject {
  kind: 'user' | 'client';
  /** The subject identifier: the user's id, or the client's `client_id`. */
  sub: string;
}

/**
 * Whether a stored token works at `now`: unexpired, its grant standing (the very grant it was
 * issued under, not revoked) and its client registered and enabled. A rotated-away refresh token
 * is usable here; the refresh grant tells reuse apart.
 */
export function usable(found: FoundTokenRecord, now: number): boolean {
  const { token, grant, client } = found;
  return (
    (token.expiresAt === null || now < token.expiresAt) &&
    grant !== null &&
    grant.grantId === token.grantId &&
    grant.revokedAt === null &&
    client !== null &&
    inService(client)
  );
}

/**
 * The scopes a stored token still stands for: those of the token that its grant (the user's
 * consent) and its client (as the operator registered it now) both still have. Narrowing a
 * client's scopes or a grant narrows every token issued under them; a refresh grants no more than
 * this, and a resource server should check a bearer token's scopes against it.
 *
 * @example
 * currentScopes(found); // ['realms'] once the operator removed 'profile' from the client
 * @see RFC 6749 sections 3.3 and 6
 */
export function currentScopes(found: FoundTokenRecord): string[] {
  const { token, grant, client } = found;
  if (grant === null || client === null) return [];
  return standingScopes(token.scopes, grant, client);
}

/** Those of `scopes` that the grant (the user's consent) and the client (as registered now) both still have. */
export function standingScopes(
  scopes: readonly string[],
  grant: Pick<GrantRecord, 'scopes'>,
  client: Pick<ClientRecord, 'scopes'>,
): string[] {
  return scopes.filter((scope) => grant.scopes.includes(scope) && client.scopes.includes(scope));
}

/** The token response body, with `scope` only when there is one. */
export function tokenResponse(access: IssuedToken, _deps: GrantDeps, refreshToken?: string): TokenResponse {
  const response: TokenResponse = {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: expiresIn(access.record),
  };
  if (refreshToken !== undefined) response.refresh_token = refreshToken;
  if (access.record.scopes.length) response.scope = access.record.scopes.join(' ');
  return response;
}

/**
 * Issues the tokens of a code or of an approved device request, behind a commit point: the access
 * and refresh tokens (and the ID token, made by the caller) are saved first, in one
 * `tokens.saveAll`, then `commit` runs the
 * single irreversible step (taking the code or the device code), which throws when another request
 * took it first. Only then is the answer made, reported as a `token.issued` event: a failure before
 * the commit leaves the code usable and hands out nothing, and the tokens of a loser are never
 * handed out.
 */
export async function issueBehindCommit(
  deps: GrantDeps,
  issue: {
    grantType: 'authorization_code' | 'device_code';
    client: Pick<ClientRecord, 'clientId' | 'unusedExpiresAt'>;
    subject: Subject;
    idToken: string | undefined;
    now: number;
    /** When the user signed in (epoch ms), when known: a JWT access token's `auth_time`. */
    authTime?: number | undefined;
  },
  commit: () => Promise<void>,
  context: () => EventContext,
): Promise<TokenResponse> {
  const { grantType, subject, idToken, now } = issue;
  // Marked first: a prune at the client's unused expiry then keeps it, or has removed it and no
  // token is saved for a client that is gone.
  await markUsed(deps, issue.client);
  const access = await newAccessToken(deps, subject, grantType, now, issue.authTime);
  const refresh = newToken(deps, 'refresh_token', subject, grantType, now);
  await deps.storage.tokens.saveAll([access.record, refresh.record]);
  await commit();
  if (listened(deps, 'token.issued')) {
    emit(deps, { type: 'token.issued', grantType, ...subject, refreshToken: true, ...context() });
  }
  const response = tokenResponse(access, deps, refresh.token);
  return idToken === undefined ? response : { ...response, id_token: idToken };
}

/**
 * A client that registered itself is kept from then on: its first token clears its unused expiry
 * ({@link ClientRecord.unusedExpiresAt}), which `prune` reads. One write at the first use, and
 * none after: the client as loaded for the request says whether it is still needed (two first
 * requests at once may both write it, to the same end). Before the commit point, among the
 * reversible steps: a failure leaves the code usable and the retry writes it again. A client
 * registered by the operator has none, and nothing is written.
 */
export async function markUsed(
  deps: GrantDeps,
  client: Pick<ClientRecord, 'clientId' | 'unusedExpiresAt'>,
): Promise<void> {
  if (client.unusedExpiresAt === undefined || client.unusedExpiresAt === null) return;
  const { clients } = deps.storage;
  // Dynamic registration is refused at start without clients.update, so an adapter lacking it
  // has no client to mark.
  if (typeof clients.update !== 'function') return;
  if ((await clients.update(client.clientId, { unusedExpiresAt: null })) === null) {
    throw new OAuthError('invalid_client', 'The client application is no longer registered.');
  }
}
