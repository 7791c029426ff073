/**
 * The hand-written, documented options interface and the zod schema that validates the options
 * are the same type, in both directions, down to each nested option (`npm run typecheck` compiles
 * this file: a drift is a type error here). The runtime part checks the same for the keys, so that
 * `vitest` alone notices too.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { optionsSchema } from '../../src/config/options.js';
import type { AuthorizationServerOptions, ResolvedOptions } from '../../src/config/types.js';

/** Exactly equal types (not merely assignable): the identity check of type-challenges. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;

type SchemaInput = z.input<typeof optionsSchema>;
type SchemaOutput = z.output<typeof optionsSchema>;
type Keys<T> = T extends object ? keyof T : never;

/** The keys of A and B whose types differ (`never` when none does). */
type Mismatch<A, B> = {
  [K in keyof A & keyof B]-?: Equal<A[K], B[K]> extends true ? never : K;
}[keyof A & keyof B];

export type Checks = [
  Expect<Equal<keyof AuthorizationServerOptions, keyof SchemaInput>>,
  Expect<Equal<keyof ResolvedOptions, keyof SchemaOutput>>,
  // Each option's own type, both directions (a mismatch names the option in the error).
  Expect<Equal<Mismatch<Required<AuthorizationServerOptions>, Required<SchemaInput>>, never>>,
  Expect<Equal<Mismatch<Required<ResolvedOptions>, Required<SchemaOutput>>, never>>,
  // Nested options: same keys (a misspelling in the interface would be a new key).
  Expect<Equal<Keys<AuthorizationServerOptions['tokens']>, Keys<SchemaInput['tokens']>>>,
  Expect<Equal<Keys<AuthorizationServerOptions['session']>, Keys<SchemaInput['session']>>>,
  Expect<Equal<Keys<AuthorizationServerOptions['login']>, Keys<SchemaInput['login']>>>,
  Expect<Equal<Keys<AuthorizationServerOptions['rateLimit']>, Keys<SchemaInput['rateLimit']>>>,
  Expect<Equal<Keys<AuthorizationServerOptions['oidc']>, Keys<SchemaInput['oidc']>>>,
  Expect<Equal<Keys<AuthorizationServerOptions['device']>, Keys<SchemaInput['device']>>>,
  Expect<
    Equal<
      Keys<AuthorizationServerOptions['clientMetadataDocuments']>,
      Keys<SchemaInput['clientMetadataDocuments']>
    >
  >,
  Expect<
    Equal<Keys<AuthorizationServerOptions['dynamicRegistration']>, Keys<SchemaInput['dynamicRegistration']>>
  >,
  Expect<Equal<Keys<AuthorizationServerOptions['developerApps']>, Keys<SchemaInput['developerApps']>>>,
  Expect<Equal<Keys<AuthorizationServerOptions['usage']>, Keys<SchemaInput['usage']>>>,
  Expect<
    Equal<Keys<AuthorizationServerOptions['providers'][number]>, Keys<SchemaInput['providers'][number]>>
  >,
  Expect<
    Equal<
      Keys<NonNullable<AuthorizationServerOptions['resources']>[number]>,
      Keys<NonNullable<SchemaInput['resources']>[number]>
    >
  >,
];

describe('AuthorizationServerOptions', () => {
  it('names the options the schema validates', () => {
    const interfaceKeys: Record<keyof AuthorizationServerOptions, true> = {
      baseUrl: true,
      storage: true,
      providers: true,
      login: true,
      tokens: true,
      device: true,
      oidc: true,
      clientMetadataDocuments: true,
      session: true,
      scopes: true,
      resources: true,
      rateLimit: true,
      dynamicRegistration: true,
      developerApps: true,
      usage: true,
      accounts: true,
      authenticatedAccount: true,
      requireStateForImplicit: true,
      profile: true,
      pages: true,
      clock: true,
      logger: true,
      onError: true,
    };
    expect(Object.keys(optionsSchema.shape).sort()).toEqual(Object.keys(interfaceKeys).sort());
  });
});
