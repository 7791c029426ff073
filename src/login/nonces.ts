import { ephemeralKeys } from '../storage/keys.js';
import type { EphemeralStore } from '../storage/types.js';
import type { NonceStore } from './openid/options.js';

/** The relying party's response nonces, kept in the storage's ephemeral store. */
export function ephemeralNonces(ephemeral: EphemeralStore, clock: () => number): NonceStore {
  return {
    use: (scope, nonce, expiresAt) =>
      ephemeral.add(ephemeralKeys.nonce(scope, nonce), '1', expiresAt, clock()),
  };
}
