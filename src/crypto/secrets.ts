import { hash, randomFillSync, timingSafeEqual } from 'node:crypto';

/**
 * A new random value with 256 bits of entropy, base64url: used for tokens, codes, client secrets
 * and CSRF tokens. High entropy is why a single SHA-256 suffices at rest (RFC 6819 5.1.4.1.3):
 * there is nothing to brute-force, unlike a password.
 */
export function generateSecret(): string {
  const at = draw(SECRET_BYTES);
  return pool.toString('base64url', at, at + SECRET_BYTES);
}

/**
 * A random (version 4) UUID: the ids of grants, users and authorization requests.
 *
 * Not `crypto.randomUUID()`: it builds its string by concatenation, which V8 keeps as a tree of
 * string pieces, about 470 bytes where the flat string takes 56, until something reads the string
 * whole. An id kept in a stored record (every code and token carries its grant's id) would keep
 * the tree as long as the record lives. This one is written as bytes and decoded once: flat.
 */
export function randomId(): string {
  const at = draw(16);
  pool[at + 6] = (pool[at + 6]! & 0x0f) | 0x40; // version 4
  pool[at + 8] = (pool[at + 8]! & 0x3f) | 0x80; // variant 10
  let j = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) uuid[j++] = 0x2d; // "-"
    const byte = pool[at + i]!;
    uuid[j++] = HEX_DIGITS[byte >> 4]!;
    uuid[j++] = HEX_DIGITS[byte & 0x0f]!;
  }
  return uuid.toString('latin1', 0, 36);
}

const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
const uuid = Buffer.alloc(36);

/**
 * Random bytes drawn from the CSPRNG 4 KiB at a time and handed out once each, as Node's own
 * `randomUUID` does: one call into the kernel per 128 secrets instead of one per secret.
 */
const SECRET_BYTES = 32;
const POOL_SIZE = 128 * SECRET_BYTES;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

/** The offset of `bytes` fresh random bytes in the pool, refilled when too few are left. */
function draw(bytes: number): number {
  if (poolOffset + bytes > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const at = poolOffset;
  poolOffset += bytes;
  return at;
}

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
