import { hashSecret } from '../crypto/secrets.js';
import type { AuthorizationServer } from '../server.js';
import type { AccessTokenRecord, RefreshTokenRecord } from '../storage/types.js';

/** A stored token found by its plaintext, whatever its state (expired, rotated away). */
export type FoundToken =
  { type: 'access_token'; record: AccessTokenRecord } | { type: 'refresh_token'; record: RefreshTokenRecord };

/**
 * The access or refresh token with this plaintext, unless revoked. The hint (RFC 7009 2.1,
 * RFC 7662 2.1) only decides which kind is looked up first: a token not found under the hinted
 * kind is looked up under the other, and an unknown hint is no error.
 */
export async function findToken(
  server: AuthorizationServer,
  token: string,
  hint: string | undefined,
): Promise<FoundToken | null> {
  const hash = hashSecret(token);
  const access = async (): Promise<FoundToken | null> => {
    const record = await server.storage.tokens.findAccessToken(hash);
    return record && { type: 'access_token', record };
  };
  const refresh = async (): Promise<FoundToken | null> => {
    const record = await server.storage.tokens.findRefreshToken(hash);
    return record && { type: 'refresh_token', record };
  };
  const [first, second] = hint === 'refresh_token' ? [refresh, access] : [access, refresh];
  return (await first()) ?? (await second());
}
