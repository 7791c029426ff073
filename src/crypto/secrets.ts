import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A new random value with 256 bits of entropy, base64url: used for tokens, codes, client secrets
 * and CSRF tokens. High entropy is why a single SHA-256 suffices at rest (RFC 6819 5.1.4.1.3):
 * there is nothing to brute-force, unlike a password.
 */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The form in which tokens, codes and client secrets are stored and looked up. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
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
