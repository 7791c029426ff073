import { MAX_PROVIDER_NAME_LENGTH } from '../../rules/names.js';
import { z } from 'zod';
import { parseHttpUrl } from './realm.js';

/**
 * What {@link RelyingParty.begin} hands the caller to keep in the user's session until the
 * callback. JSON-serialisable. `returnTo` carries the per-login `rp_nonce`, which ties the
 * callback to the session that began the login (login-CSRF defence).
 */
export interface LoginState {
  /**
   * Random id of this login, 128 bits in base64url. The first callback claims it in the shared
   * nonce store; every other callback for the same login is refused before anything is fetched.
   */
  id: string;
  /** Name of the configured provider. */
  provider: string;
  /** The OP endpoint found by discovery; the response must name exactly this one. */
  opEndpoint: string;
  /** The exact `openid.return_to` sent, `rp_nonce` included. */
  returnTo: string;
  /** Epoch ms from the relying party's clock. */
  startedAt: number;
}

const loginStateSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{22}$/),
  provider: z.string().min(1).max(MAX_PROVIDER_NAME_LENGTH),
  opEndpoint: z
    .string()
    .max(2048)
    .refine((v) => parseHttpUrl(v) !== null),
  returnTo: z
    .string()
    .max(2048)
    .refine((v) => parseHttpUrl(v) !== null),
  startedAt: z.number().int().nonnegative(),
});

/**
 * Validates a login state read back from a session; `null` if it is not one. Sessions are
 * server-side, but they outlive deployments and may be shared, so the shape is checked anyway.
 */
export function parseLoginState(value: unknown): LoginState | null {
  const parsed = loginStateSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}
