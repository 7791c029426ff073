/**
 * A provider's name has one limit, MAX_PROVIDER_NAME_LENGTH: the options refuse a longer name
 * and say so with that number, and the relying party takes every name the options let through.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PROVIDER_NAME_LENGTH } from '../../src/rules/names.js';
import { createAuthorizationServer, memoryStorage } from '../../src/index.js';
import { openIdProviderSchema } from '../../src/login/openid/options.js';

const identifier = 'https://id.example.com/';
const serverWith = (name: string) =>
  createAuthorizationServer({
    baseUrl: 'https://auth.example.com',
    storage: memoryStorage(),
    providers: [{ name, identifier }],
    session: { secret: 'a session secret of at least 32 characters' },
  });

describe('the provider name limit', () => {
  it('is 100 characters, the number the documentation gives', () => {
    expect(MAX_PROVIDER_NAME_LENGTH).toBe(100);
  });

  it('lets a name of that length through and refuses one character more, naming the limit', () => {
    expect(() => serverWith('n'.repeat(MAX_PROVIDER_NAME_LENGTH))).not.toThrow();
    expect(() => serverWith('n'.repeat(MAX_PROVIDER_NAME_LENGTH + 1))).toThrow(
      `providers.0.name: Too big: expected string to have <=${MAX_PROVIDER_NAME_LENGTH} characters`,
    );
    expect(() => serverWith('n'.repeat(MAX_PROVIDER_NAME_LENGTH + 1))).toThrow(
      `give each provider a name of 1 to ${MAX_PROVIDER_NAME_LENGTH} characters`,
    );
  });

  it("is within the relying party's own limit, so every accepted name logs in", () => {
    expect(
      openIdProviderSchema.safeParse({ name: 'n'.repeat(MAX_PROVIDER_NAME_LENGTH), identifier }).success,
    ).toBe(true);
  });
});
