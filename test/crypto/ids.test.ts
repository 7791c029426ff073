import { describe, expect, it } from 'vitest';
import { generateSecret, randomId } from '../../src/crypto/secrets.js';

/** 16 random bytes as hex, without bytes 6 and 8, whose high bits carry a UUID's version and variant. */
const chunkKey = (hex: string) => hex.slice(0, 12) + hex.slice(14, 16) + hex.slice(18, 32);

describe('randomId', () => {
  it('is a version 4 UUID, different every time', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = randomId();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(20_000);
  });

  it('never hands out bytes a secret from the same pool also got', () => {
    // Ids take 16 bytes of the pool and secrets 32, so any overlap would make an id's bytes one
    // half of a secret's.
    const chunks = new Set<string>();
    let drawn = 0;
    for (let i = 0; i < 10_000; i++) {
      chunks.add(chunkKey(randomId().replaceAll('-', '')));
      const secret = Buffer.from(generateSecret(), 'base64url').toString('hex');
      chunks.add(chunkKey(secret.slice(0, 32)));
      chunks.add(chunkKey(secret.slice(32)));
      drawn += 3;
    }
    expect(chunks.size).toBe(drawn);
  });
});
