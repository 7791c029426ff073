import { generateSecret, hashSecret, randomId } from '../crypto/secrets.js';
import type { AuthorizationServer } from '../server.js';
import type { AccessTokenRecord, AuthorizationCodeRecord } from '../storage/types.js';

/** The JSON of a successful token response (RFC 6749 5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope?: string;
}

interface Subject {
  clientId: string;
  userId: string;
  scopes: string[];
  grantId: string;
}

/** A new id grouping every token of one authorization. */
export const newGrantId = (): string => randomId();

/** Creates a single-use authorization code; resolves the plaintext, shown once, and its grant. */
export async function issueCode(
  server: AuthorizationServer,
  fields: Omit<AuthorizationCodeRecord, 'codeHash' | 'createdAt' | 'expiresAt' | 'grantId'>,
): Promise<{ code: string; grantId: string }> {
  const code = generateSecret();
  const grantId = newGrantId();
  const now = server.clock();
  await server.storage.codes.create({
    ...fields,
    codeHash: hashSecret(code),
    grantId,
    createdAt: now,
    expiresAt: now + server.options.tokens.codeTtl * 1000,
  });
  return { code, grantId };
}

/** Creates an access token; resolves the plaintext and its lifetime in seconds. */
export async function issueAccessToken(
  server: AuthorizationServer,
  subject: Subject,
  origin: AccessTokenRecord['origin'],
): Promise<{ token: string; expiresIn: number }> {
  const token = generateSecret();
  const now = server.clock();
  const expiresIn = server.options.tokens.accessTokenTtl;
  await server.storage.tokens.saveAccessToken({
    clientId: subject.clientId,
    userId: subject.userId,
    scopes: subject.scopes,
    grantId: subject.grantId,
    tokenHash: hashSecret(token),
    origin,
    createdAt: now,
    expiresAt: now + expiresIn * 1000,
  });
  return { token, expiresIn };
}

/** Creates a refresh token, valid until revoked (the spec); resolves the plaintext. */
export async function issueRefreshToken(server: AuthorizationServer, subject: Subject): Promise<string> {
  const token = generateSecret();
  await server.storage.tokens.saveRefreshToken({
    clientId: subject.clientId,
    userId: subject.userId,
    scopes: subject.scopes,
    grantId: subject.grantId,
    tokenHash: hashSecret(token),
    createdAt: server.clock(),
    expiresAt: null,
    rotatedAt: null,
  });
  return token;
}

/** The token response body, with `scope` only when there is one. */
export function tokenResponse(
  access: { token: string; expiresIn: number },
  scopes: string[],
  refreshToken?: string,
): TokenResponse {
  const response: TokenResponse = {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
  };
  if (refreshToken !== undefined) response.refresh_token = refreshToken;
  if (scopes.length) response.scope = scopes.join(' ');
  return response;
}
