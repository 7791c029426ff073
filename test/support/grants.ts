/**
 * Grants, codes and tokens seeded through the library's own rules, and what the tests ask of a
 * token: whether it works, as `requireBearer` decides.
 */
import { hashSecret } from '../../src/crypto/secrets.js';
import { issueCode, recordConsent, saveAccessToken, usable } from '../../src/grants/index.js';
import { newToken } from '../../src/grants/tokens.js';
import { ServerEvents } from '../../src/events/emitter.js';
import type { GrantDeps } from '../../src/grants/index.js';
import type { FoundTokenRecord, GrantRecord, Storage } from '../../src/storage/types.js';

/** The user's standing grant for the client (created, or widened to `scopes`). */
export function seedGrant(
  server: GrantDeps,
  clientId: string,
  userId = 'seeded-user',
  scopes: string[] = ['realms'],
): Promise<GrantRecord> {
  return recordConsent(server, userId, clientId, scopes).then((consent) => consent.grant);
}

/** An access and a refresh token under the user's grant for the client. */
export async function seedTokens(
  server: GrantDeps,
  clientId: string,
  userId = 'seeded-user',
  scopes: string[] = ['realms'],
): Promise<{ accessToken: string; refreshToken: string; grant: GrantRecord }> {
  const grant = await seedGrant(server, clientId, userId, scopes);
  const subject = { clientId, userId, scopes, grantId: grant.grantId };
  const now = server.clock();
  const access = await saveAccessToken(server, subject, 'authorization_code', now);
  const refresh = newToken(server, 'refresh_token', subject, 'authorization_code', now);
  await server.storage.tokens.save(refresh.record);
  return { accessToken: access.token, refreshToken: refresh.token, grant };
}

/** An unused authorization code under the user's grant for the client. */
export async function seedCode(
  server: GrantDeps,
  fields: {
    clientId: string;
    redirectUri: string;
    userId?: string;
    scopes?: string[];
    codeChallenge?: string | null;
  },
): Promise<string> {
  const userId = fields.userId ?? 'seeded-user';
  const scopes = fields.scopes ?? ['realms'];
  const grant = await seedGrant(server, fields.clientId, userId, scopes);
  return issueCode(server, {
    clientId: fields.clientId,
    userId,
    redirectUri: fields.redirectUri,
    scopes,
    grantId: grant.grantId,
    codeChallenge: fields.codeChallenge ?? null,
    codeChallengeMethod: fields.codeChallenge ? 'S256' : null,
  });
}

/** Whether the token (access or refresh) works now: unexpired, its grant standing, its client enabled. */
export async function tokenWorks(server: GrantDeps, token: string): Promise<boolean> {
  const found = await server.storage.tokens.find(hashSecret(token));
  return found !== null && usable(found, server.clock());
}

/** The stored token with this plaintext, with its grant and client, whatever its state. */
export function storedToken(server: GrantDeps, token: string): Promise<FoundTokenRecord | null> {
  return server.storage.tokens.find(hashSecret(token));
}

/** The library's grant rules over a bare storage, with the default token lifetimes and the system clock. */
export function grantDeps(storage: Storage): GrantDeps {
  return {
    storage,
    clock: Date.now,
    options: { tokens: { accessTokenTtl: 3600, codeTtl: 600, rotateRefreshTokens: false } },
    events: new ServerEvents(() => console),
  };
}
