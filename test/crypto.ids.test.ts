import { describe, expect, it } from 'vitest';
import { generateSecret, randomId } from '../src/crypto/secrets.js';

describe('randomId', () => {
  it('is a version 4 UUID, different every time, drawn apart from the secrets', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = randomId();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      seen.add(id);
      // Secrets come from the same pool: interleaving must never hand the same bytes out twice.
      seen.add(Buffer.from(generateSecret(), 'base64url').toString('hex'));
    }
    expect(seen.size).toBe(40_000);
  });
});
