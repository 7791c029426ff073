import { hash, randomFillSync, timingSafeEqual } from 'node:crypto';

/**
 * A new random value with 256 bits of entropy, base64url: used for tokens, codes, client secrets
 * and CSRF tokens. High entropy is why a single SHA-256 suffices at rest (RFC 6819 5.1.4.1.3):
 * there is nothing to brute-force, unlike a password.
 */
export function generateSecret(): string {
  if (poolOffset === POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const secret = pool.toString('base64url', poolOffset, poolOffset + SECRET_BYTES);
  poolOffset += SECRET_BYTES;
  return secret;
}

/**
 * Random bytes drawn from the CSPRNG 4 KiB at a time and handed out once each, as Node's own
 * `randomUUID` does: one call into the kernel per 128 secrets instead of one per secret.
 */
const SECRET_BYTES = 32;
const POOL_SIZE = 128 * SECRET_BYTES;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

/** The form in which tokens, codes and client secrets are stored and looked up. */
export function hashSecret(secret: string): string {
  // The one-shot form: no Hash object per call, on the path of every bearer request.
  return hash('sha256', secret, 'base64url');
}

/** Compares two strings in constant time for equal lengths (CSRF tokens, hashes). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Compares a presented secret with a stored hash in constant time. Hashing first makes both
 * operands the same length, so the comparison leaks neither content nor length.
 */
export function secretMatchesHash(secret: string, storedHash: string): boolean {
  return safeEqual(hashSecret(secret), storedHash);
}
