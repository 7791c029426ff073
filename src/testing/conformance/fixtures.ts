import { randomBytes, randomUUID } from 'node:crypto';
import type { ClientRecord, GrantRecord, TokenRecord } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';

/*
 * Fresh records for one test. Every id and hash is random, so tests never meet each other's rows
 * nor depend on an empty database. Times are relative to the `now` each test passes in.
 */

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** How many callers race in the single-use tests. */
export const RACERS = 50;

/** A fresh id, readable in failure messages: `user-3f2a...`. */
export function freshId(kind: string): string {
  return `${kind}-${randomUUID()}`;
}

/** A fresh value shaped like what the library stores: SHA-256, base64url (43 characters). */
export function freshHash(): string {
  return randomBytes(32).toString('base64url');
}

/** A code client with a secret and every optional field set, as `registerClient` stores it. */
export function clientRecord(now: number, overrides: Partial<ClientRecord> = {}): ClientRecord {
  return {
    clientId: freshId('client'),
    applicationName: 'Photo printer',
    redirectUri: 'https://printer.example/callback',
    grantType: 'authorization_code',
    secretHash: freshHash(),
    scopes: ['realms:read', 'realms:write', 'profile'],
    defaultScopes: ['realms:read'],
    contacts: ['dev@printer.example', 'ops@printer.example'],
    postLogoutRedirectUris: ['https://printer.example/signed-out', 'https://printer.example/bye'],
    disabled: false,
    requirePkce: false,
    createdAt: now,
    ...overrides,
  };
}

/** A standing grant of a fresh user at a fresh client. */
export function grantRecord(now: number, overrides: Partial<GrantRecord> = {}): GrantRecord {
  return {
    grantId: freshId('grant'),
    userId: freshId('user'),
    clientId: freshId('client'),
    scopes: ['realms:read', 'profile'],
    createdAt: now,
    updatedAt: now,
    revokedAt: null,
    ...overrides,
  };
}

/** An access token of `grant`, valid for one hour. */
export function accessTokenRecord(
  now: number,
  grant: Pick<GrantRecord, 'grantId' | 'userId' | 'clientId'>,
  overrides: Partial<TokenRecord> = {},
): TokenRecord {
  return {
    tokenHash: freshHash(),
    type: 'access_token',
    grantId: grant.grantId,
    clientId: grant.clientId,
    userId: grant.userId,
    scopes: ['realms:read'],
    createdAt: now,
    expiresAt: now + HOUR,
    origin: 'authorization_code',
    rotatedAt: null,
    ...overrides,
  };
}

/** A refresh token of `grant`, valid until revoked, never rotated. */
export function refreshTokenRecord(
  now: number,
  grant: Pick<GrantRecord, 'grantId' | 'userId' | 'clientId'>,
  overrides: Partial<TokenRecord> = {},
): TokenRecord {
  return accessTokenRecord(now, grant, { type: 'refresh_token', expiresAt: null, ...overrides });
}

/** `record` without `keys`: what an adapter may leave out, or what a test does not compare. */
export function without<T extends object, K extends keyof T>(record: T, ...keys: K[]): Omit<T, K> {
  const copy = { ...record };
  for (const key of keys) delete copy[key];
  return copy;
}

/** A client registered through the suite and a standing grant of a fresh user at it, saved. */
export async function enrolled(
  { putClient, storage }: Pick<ConformanceSuite, 'putClient' | 'storage'>,
  now: number,
): Promise<{ client: ClientRecord; grant: GrantRecord }> {
  const client = clientRecord(now);
  await putClient(client);
  const grant = grantRecord(now, { clientId: client.clientId });
  await storage().grants.save(grant);
  return { client, grant };
}
