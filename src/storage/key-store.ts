/*
 * The OpenID Connect signing keys' store: a handful of rows a durable adapter keeps beside its other
 * stores (`Storage.keys`), split from types.ts, which holds the rest of the contract.
 */

/**
 * A key that signs ID tokens (OpenID Connect), as the {@link KeyStore} keeps it. A key is
 * published (in the JWKS) before it signs and until it is retired, so a token signed with it keeps
 * verifying for as long as a client may hold it.
 */
export interface SigningKeyRecord {
  /** Unique, never reused: the `kid` of the JWKS and of every token the key signs. */
  kid: string;
  /** The JWS algorithm: `RS256` or `ES256`. */
  alg: 'RS256' | 'ES256';
  /**
   * `next`: published, not yet signing (so clients have it before it signs); `active`: published,
   * and the most recently activated active key signs; `retired`: not published, its tokens no
   * longer verify. A key only moves forward: next → active → retired.
   */
  state: 'next' | 'active' | 'retired';
  /** The public JWK, as JSON. */
  publicJwk: string;
  /**
   * The private JWK sealed with a key derived from the server's `oidc.keySecret` (a compact JWE,
   * `dir` + `A256GCM`): never plaintext at rest.
   */
  sealedPrivateJwk: string;
  createdAt: number;
  /** When it became `active`; `null` while `next`. */
  activatedAt: number | null;
  /** When it was retired; `null` until then. */
  retiredAt: number | null;
}

/**
 * The keys that sign ID tokens, shared by every instance. Needed only with OpenID Connect on and
 * keys kept by the library (`oidc.keySecret`); a host that hands in its own keys needs none.
 */
export interface KeyStore {
  /** Every key, retired ones included, ordered by `createdAt` then `kid`. */
  list(): Promise<SigningKeyRecord[]>;
  /**
   * Inserts the key, or replaces the one with the same `kid`, writing every field as given.
   * Visible to every instance once it resolves.
   */
  save(key: SigningKeyRecord): Promise<void>;
}
