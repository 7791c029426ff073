import { ephemeralKeys } from '../storage/keys.js';
import type { EphemeralStore } from '../storage/types.js';
import type { NonceStore } from './openid/options.js';

/**
 * The relying party's response nonces, kept in the storage's ephemeral store.
 *
 * The relying party accepts a nonce while `|now - timestamp| <= nonceMaxAgeMs` and passes
 * `timestamp + nonceMaxAgeMs`, the last instant it accepts, as `expiresAt`; an ephemeral entry is
 * absent from its `expiresAt` on (and `prune(now)` deletes it then). The entry is therefore kept
 * one millisecond longer, so that a replay in that last accepted millisecond, or after a prune at
 * that cutoff, still finds it (OpenID 2.0 11.3).
 */
export function ephemeralNonces(ephemeral: EphemeralStore, clock: () => number): NonceStore {
  return {
    use: (scope, nonce, expiresAt) =>
      ephemeral.add(ephemeralKeys.nonce(scope, nonce), '1', expiresAt + 1, clock()),
  };
}
