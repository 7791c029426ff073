import { randomBytes, randomUUID } from 'node:crypto';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ClientRecord,
  RefreshTokenRecord,
  Storage,
} from '../../storage/types.js';

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

/** A code client with a secret, as `registerClient` stores it. */
export function clientRecord(now: number, overrides: Partial<ClientRecord> = {}): ClientRecord {
  return {
    clientId: freshId('client'),
    applicationName: 'Photo printer',
    redirectUri: 'https://printer.example/callback',
    grantType: 'authorization_code',
    secretHash: freshHash(),
    scopes: ['realms:read', 'realms:write'],
    disabled: false,
    createdAt: now,
    ...overrides,
  };
}

/** An authorization code without PKCE, valid for one minute. */
export function codeRecord(
  now: number,
  overrides: Partial<AuthorizationCodeRecord> = {},
): AuthorizationCodeRecord {
  return {
    codeHash: freshHash(),
    clientId: freshId('client'),
    userId: freshId('user'),
    redirectUri: 'https://printer.example/callback/done?x=1',
    scopes: ['realms:read', 'profile'],
    grantId: freshId('grant'),
    codeChallenge: null,
    codeChallengeMethod: null,
    createdAt: now,
    expiresAt: now + MINUTE,
    ...overrides,
  };
}

/** Who holds a token: user, client and grant. */
export interface TokenOwner {
  userId: string;
  clientId: string;
  grantId: string;
}

/**
 * A fresh user and grant at a client that exists: a new one unless `overrides.clientId` names one.
 * Tokens are found only while their client exists and is enabled, so a test that expects a token
 * to be missing must use a real client, or it would pass for the wrong reason.
 */
export async function enrolledOwner(
  storage: Storage,
  now: number,
  overrides: Partial<TokenOwner> = {},
): Promise<TokenOwner> {
  const owner = {
    userId: freshId('user'),
    clientId: freshId('client'),
    grantId: freshId('grant'),
    ...overrides,
  };
  if (overrides.clientId === undefined)
    await storage.clients.create(clientRecord(now, { clientId: owner.clientId }));
  return owner;
}

/** An access token from a code exchange, valid for one hour. */
export function accessToken(
  now: number,
  owner: TokenOwner,
  overrides: Partial<AccessTokenRecord> = {},
): AccessTokenRecord {
  return {
    tokenHash: freshHash(),
    ...owner,
    scopes: ['realms:read'],
    createdAt: now,
    expiresAt: now + HOUR,
    origin: 'authorization_code',
    ...overrides,
  };
}

/** A refresh token valid until revoked, never rotated. */
export function refreshToken(
  now: number,
  owner: TokenOwner,
  overrides: Partial<RefreshTokenRecord> = {},
): RefreshTokenRecord {
  return {
    tokenHash: freshHash(),
    ...owner,
    scopes: ['realms:read'],
    createdAt: now,
    expiresAt: null,
    rotatedAt: null,
    ...overrides,
  };
}
