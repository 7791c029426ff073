import type { ConformanceSuite } from './api.js';
import { equal, oneWinner, race } from './check.js';
import { MINUTE, RACERS, freshHash, freshId } from './fixtures.js';

/** A fresh OP endpoint, the scope of a nonce. */
const freshScope = () => `https://op.example/${freshId('endpoint')}`;

/** `nonces`: each nonce usable once per scope, whoever races. */
export function nonceTests({ describe, it, storage }: ConformanceSuite): void {
  describe('nonces', () => {
    it('use: true the first time, false after', async () => {
      const [scope, nonce, expiresAt] = [freshScope(), freshHash(), Date.now() + 5 * MINUTE];
      equal(
        await storage().nonces.use(scope, nonce, expiresAt),
        true,
        'nonces.use must resolve true for a new nonce',
      );
      equal(
        await storage().nonces.use(scope, nonce, expiresAt),
        false,
        'nonces.use must resolve false for a nonce already used in the same scope',
      );
    });

    it(`use: exactly one of ${RACERS} concurrent callers gets true`, async () => {
      const [scope, nonce, expiresAt] = [freshScope(), freshHash(), Date.now() + 5 * MINUTE];
      const results = await race('nonces.use', RACERS, () => storage().nonces.use(scope, nonce, expiresAt));
      oneWinner(
        results,
        true,
        false,
        `nonces.use: of ${RACERS} concurrent calls with one nonce, exactly one must resolve true. Insert it in one ` +
          'atomic operation that fails on a duplicate (a unique key, INSERT ... ON CONFLICT DO NOTHING, SET NX).',
      );
    });

    it('use: the same nonce in another scope is another nonce', async () => {
      const [scope, other, nonce, expiresAt] = [
        freshScope(),
        freshScope(),
        freshHash(),
        Date.now() + 5 * MINUTE,
      ];
      await storage().nonces.use(scope, nonce, expiresAt);
      equal(
        await storage().nonces.use(other, nonce, expiresAt),
        true,
        'nonces.use must keep nonces per scope: a nonce used at one OP endpoint is new at another',
      );
      equal(
        await storage().nonces.use(scope, nonce, expiresAt),
        false,
        'nonces.use in another scope must not make the nonce usable again in the first scope',
      );
      equal(
        await storage().nonces.use(scope, freshHash(), expiresAt),
        true,
        'nonces.use must resolve true for another nonce in the same scope',
      );
    });
  });
}
