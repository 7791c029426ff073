import { setTimeout as sleep } from 'node:timers/promises';
import type { EphemeralConformanceSuite } from './api.js';
import { equal, isNull, oneWinner, race } from './check.js';
import { MINUTE, RACERS, freshId } from './fixtures.js';

/*
 * `ephemeral.replace`, compare and set: the code exchange's commit point, which takes the code and
 * leaves its used marker in one step. Expiry in real time, as the other ephemeral tests.
 */
const SHORT = 300;
const MARGIN = 150;
const now = () => Date.now();
const later = () => Date.now() + MINUTE;
const key = () => freshId('ephemeral');

/** The tests of `ephemeral.replace`, in the `ephemeral` group. @internal */
export function replaceTests({ it, store }: EphemeralConformanceSuite): void {
  it('replace: writes the new value and expiry only over the value expected; true when it did', async () => {
    const k = key();
    await store().set(k, 'code', later(), now());
    equal(
      await store().replace(k, 'another', 'used', later(), now()),
      false,
      'ephemeral.replace must resolve false when the live value is not the one expected',
    );
    equal(
      await store().get(k, now()),
      'code',
      'ephemeral.replace must leave a value it did not expect as it was',
    );
    const [expiresAt] = [now() + SHORT];
    equal(
      await store().replace(k, 'code', 'used', expiresAt, now()),
      true,
      'ephemeral.replace must resolve true when it replaced the value expected',
    );
    equal(
      await store().get(k, now()),
      'used',
      'ephemeral.replace must store the new value in place of the old',
    );
    equal(
      await store().replace(k, 'code', 'used again', later(), now()),
      false,
      'ephemeral.replace must resolve false once the value expected has been replaced',
    );
    await sleep(Math.max(0, expiresAt + MARGIN - Date.now()));
    isNull(await store().get(k, now()), 'ephemeral.replace must give the new value the expiresAt given');
  });

  it('replace: an absent or expired key is never written', async () => {
    const [absent, expired, expiresAt] = [key(), key(), now() + SHORT];
    equal(
      await store().replace(absent, '', 'used', later(), now()),
      false,
      'ephemeral.replace of an absent key must resolve false',
    );
    isNull(await store().get(absent, now()), 'ephemeral.replace must not create an absent key');
    await store().set(expired, 'code', expiresAt, now());
    await sleep(Math.max(0, expiresAt + MARGIN - Date.now()));
    equal(
      await store().replace(expired, 'code', 'used', later(), now()),
      false,
      'ephemeral.replace of an expired entry must resolve false',
    );
    isNull(await store().get(expired, now()), 'ephemeral.replace must not bring an expired entry back');
  });

  it(`replace: exactly one of ${RACERS} concurrent callers replaces the value`, async () => {
    const [k, value] = [key(), freshId('code')];
    await store().set(k, value, later(), now());
    const results = await race('ephemeral.replace', RACERS, (i) =>
      store().replace(k, value, `used ${i}`, later(), now()),
    );
    oneWinner(
      results,
      true,
      false,
      `ephemeral.replace: of ${RACERS} concurrent calls expecting one value, exactly one must replace it and the ` +
        'others resolve false. Compare and set in one atomic operation (UPDATE ... WHERE value = expected, a Lua script), never read then write.',
    );
    const winner = results.indexOf(true);
    equal(
      await store().get(k, now()),
      `used ${winner}`,
      "ephemeral.replace: the entry must hold the winner's value",
    );
  });
}
