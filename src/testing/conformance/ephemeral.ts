import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EphemeralConformanceSuite } from './api.js';
import { equal, isNull, oneWinner, race, sameMembers } from './check.js';
import { replaceTests } from './ephemeral-replace.js';
import { HOUR, MINUTE, RACERS, freshId } from './fixtures.js';

/*
 * Expiry is tested in real time, with `now` = Date.now(): a store with native expiry (Redis)
 * expires keys on its own clock, whatever `now` says. Entries that must expire live SHORT ms, and
 * a test waits until MARGIN ms after that. Reported expiry times may be off by up to TOLERANCE ms
 * (a native expiry read back as a time to live, after a round trip).
 */
const SHORT = 300;
const MARGIN = 150;
const TOLERANCE = 500;

/** Waits until `expiresAt` has passed, by MARGIN ms. */
const pastExpiry = (expiresAt: number) => sleep(Math.max(0, expiresAt + MARGIN - Date.now()));
const now = () => Date.now();
/** An expiry far enough not to be reached during a test. */
const later = () => Date.now() + MINUTE;
const key = () => freshId('ephemeral');

/**
 * The tests of the `EphemeralStore` contract, one per guarantee, for a suite of the storage
 * conformance kit or {@link describeEphemeralStoreConformance}.
 *
 * @internal
 */
export function ephemeralTests(suite: EphemeralConformanceSuite): void {
  const { describe, it } = suite;
  const store = () => suite.store();

  describe('ephemeral', () => {
    it('get: an absent key gives null', async () => {
      isNull(await store().get(key(), now()), 'ephemeral.get must resolve null for a key never set');
    });

    it('get: the value set, until it expires', async () => {
      const [k, expiresAt] = [key(), now() + SHORT];
      await store().set(k, 'v', expiresAt, now());
      equal(await store().get(k, now()), 'v', 'ephemeral.get must resolve the value set while it lives');
      await pastExpiry(expiresAt);
      isNull(await store().get(k, now()), 'ephemeral.get must resolve null once the entry has expired');
    });

    it('set: replaces the value and the expiry', async () => {
      const [shortened, extended] = [key(), key()];
      await store().set(shortened, 'long', later(), now());
      await store().set(extended, 'short', now() + SHORT, now());
      const expiresAt = now() + SHORT;
      await store().set(shortened, 'replaced', expiresAt, now());
      await store().set(extended, 'replaced', later(), now());
      equal(await store().get(shortened, now()), 'replaced', 'ephemeral.set must replace the value of a key');
      await pastExpiry(expiresAt);
      isNull(
        await store().get(shortened, now()),
        'ephemeral.set must replace the expiry too: an entry set again with an earlier expiresAt expires then',
      );
      equal(
        await store().get(extended, now()),
        'replaced',
        'ephemeral.set must replace the expiry too: an entry set again with a later expiresAt lives on',
      );
    });

    it('set: an expiresAt at or before now leaves the key absent', async () => {
      const k = key();
      await store().set(k, 'live', later(), now());
      const t = now();
      await store().set(k, 'expired', t, t);
      isNull(
        await store().get(k, now()),
        'ephemeral.set with expiresAt <= now must leave the key absent (an expired entry is absent), ' +
          'and must not keep the value it replaces',
      );
    });

    it('add: true and stores the value if the key is absent; false while the entry lives', async () => {
      const [k, taken] = [key(), key()];
      equal(
        await store().add(k, 'first', later(), now()),
        true,
        'ephemeral.add must resolve true for an absent key',
      );
      equal(
        await store().add(k, 'second', later(), now()),
        false,
        'ephemeral.add must resolve false while the entry lives',
      );
      equal(await store().get(k, now()), 'first', 'ephemeral.add must not replace a live value');
      await store().set(taken, 'set', later(), now());
      equal(
        await store().add(taken, 'added', later(), now()),
        false,
        'ephemeral.add must resolve false for a key written by set',
      );
    });

    it(`add: exactly one of ${RACERS} concurrent callers gets true, and its value is stored`, async () => {
      const k = key();
      const expiresAt = later();
      const results = await race('ephemeral.add', RACERS, (i) =>
        store().add(k, `value-${i}`, expiresAt, now()),
      );
      oneWinner(
        results,
        true,
        false,
        `ephemeral.add: of ${RACERS} concurrent calls for one key, exactly one must resolve true. Write in one ` +
          'atomic operation that fails if the key exists (SET NX, INSERT ... ON CONFLICT DO NOTHING).',
      );
      equal(
        await store().get(k, now()),
        `value-${results.indexOf(true)}`,
        'ephemeral.add: the value stored must be the one of the caller that got true',
      );
    });

    it('add: true again once the entry has expired', async () => {
      const [k, expiresAt] = [key(), now() + SHORT];
      await store().add(k, 'first', expiresAt, now());
      await pastExpiry(expiresAt);
      equal(
        await store().add(k, 'second', later(), now()),
        true,
        'ephemeral.add must resolve true once the entry has expired',
      );
      equal(
        await store().get(k, now()),
        'second',
        'ephemeral.add over an expired entry must store the new value',
      );
    });

    it('take: resolves the value and removes it', async () => {
      const k = key();
      await store().set(k, 'once', later(), now());
      equal(await store().take(k, now()), 'once', 'ephemeral.take must resolve the value of a live entry');
      isNull(await store().take(k, now()), 'ephemeral.take must resolve null for a key already taken');
      isNull(await store().get(k, now()), 'ephemeral.take must remove the entry');
      equal(
        await store().add(k, 'again', later(), now()),
        true,
        'ephemeral.add must resolve true for a key taken',
      );
    });

    it(`take: exactly one of ${RACERS} concurrent callers receives the value`, async () => {
      const [k, value] = [key(), freshId('value')];
      await store().set(k, value, later(), now());
      const results = await race('ephemeral.take', RACERS, () => store().take(k, now()));
      oneWinner(
        results,
        value,
        null,
        `ephemeral.take: of ${RACERS} concurrent calls for one key, exactly one must receive the value and the ` +
          'others null. Read and delete in one atomic operation (GETDEL, DELETE ... RETURNING), never read then delete.',
      );
    });

    it('take: an absent or expired key gives null', async () => {
      const [k, expiresAt] = [key(), now() + SHORT];
      isNull(await store().take(key(), now()), 'ephemeral.take must resolve null for a key never set');
      await store().set(k, 'v', expiresAt, now());
      await pastExpiry(expiresAt);
      isNull(await store().take(k, now()), 'ephemeral.take must resolve null once the entry has expired');
    });

    replaceTests(suite);

    it('increment: a new counter starts at 1 with the expiresAt given, then counts up', async () => {
      const [k, expiresAt] = [key(), later()];
      const first = await store().increment(k, expiresAt, now());
      equal(first.count, 1, 'ephemeral.increment must start an absent counter at 1');
      near(first.expiresAt, expiresAt, 'ephemeral.increment must give a new counter the expiresAt passed in');
      equal(
        (await store().increment(k, expiresAt, now())).count,
        2,
        'ephemeral.increment must add one to a live counter',
      );
    });

    it(`increment: ${RACERS} concurrent callers see the distinct counts 1 to ${RACERS}`, async () => {
      const [k, expiresAt] = [key(), later()];
      const counters = await race('ephemeral.increment', RACERS, () =>
        store().increment(k, expiresAt, now()),
      );
      sameMembers(
        counters.map((counter) => String(counter.count)),
        Array.from({ length: RACERS }, (_, i) => String(i + 1)),
        `ephemeral.increment: ${RACERS} concurrent calls for one key must each see a distinct count, 1 to ` +
          `${RACERS}. Increment in one atomic operation (INCR, UPDATE ... SET n = n + 1 RETURNING n).`,
      );
      for (const counter of counters) {
        near(counter.expiresAt, expiresAt, 'ephemeral.increment must report the expiry of the counter');
      }
    });

    it('increment: a live counter keeps its expiry; an expired one starts again at 1', async () => {
      const [k, window] = [key(), now() + SHORT];
      await store().increment(k, window, now());
      const second = await store().increment(k, later(), now());
      equal(second.count, 2, 'ephemeral.increment must add one to a live counter');
      near(
        second.expiresAt,
        window,
        'ephemeral.increment must keep the expiry of a live counter, not move it',
      );
      await pastExpiry(window);
      const next = later();
      const restarted = await store().increment(k, next, now());
      equal(
        restarted.count,
        1,
        'ephemeral.increment must start again at 1 once the counter has expired (at its first expiresAt)',
      );
      near(
        restarted.expiresAt,
        next,
        'ephemeral.increment must give a restarted counter the expiresAt passed in',
      );
    });

    it('delete: removes the key; no error if absent', async () => {
      const k = key();
      await store().set(k, 'v', later(), now());
      await store().delete(k);
      isNull(await store().get(k, now()), 'ephemeral.delete must remove the entry');
      equal(
        await store().add(k, 'again', later(), now()),
        true,
        'ephemeral.add must resolve true for a deleted key',
      );
      await store().delete(key());
    });

    it('keys that differ only in a suffix or in letter case stay apart', async () => {
      const base = key();
      const keys = [base, `${base} `, `${base}:`, `${base}:x`, `${base}x`, base.toUpperCase()];
      for (const [i, k] of keys.entries()) await store().set(k, String(i), later(), now());
      const read = async () => Promise.all(keys.map((k) => store().get(k, now())));
      assert.deepStrictEqual(
        await read(),
        keys.map((_, i) => String(i)),
        `ephemeral.set/get must keep keys apart that differ only in a suffix (a trailing space, ':') or in ` +
          `letter case; compare keys exactly (binary, no trimming, case-sensitive). Keys: ${JSON.stringify(keys)}`,
      );
      equal(await store().take(base, now()), '0', 'ephemeral.take must take the key given');
      await store().delete(keys[1]!);
      assert.deepStrictEqual(
        await read(),
        [null, null, ...keys.slice(2).map((_, i) => String(i + 2))],
        'ephemeral.take and ephemeral.delete must remove only the key given, not keys it is a prefix of',
      );
      await store().increment(`${base}:n`, later(), now());
      equal(
        (await store().increment(`${base}:nx`, later(), now())).count,
        1,
        'ephemeral.increment must count each key apart',
      );
    });

    it('values round-trip exactly: empty, unicode, newlines, JSON, 64 KiB', async () => {
      const values = [
        '',
        ' padded ',
        'null',
        '0',
        'héllo wörld, 日本語, 🔑, 👩‍👩‍👧, e\u0301, \u2028',
        'line 1\nline 2\r\n\ttabbed\n',
        JSON.stringify({
          quote: '"',
          backslash: '\\',
          nul: '\u0000',
          nested: [null, true, 1.5],
          text: 'a\nb',
        }),
        'x'.repeat(64 * 1024),
      ];
      for (const value of values) {
        const [viaSet, viaAdd] = [key(), key()];
        await store().set(viaSet, value, later(), now());
        await store().add(viaAdd, value, later(), now());
        const guarantee = (how: string) =>
          `ephemeral.${how} must give back the exact string stored (${JSON.stringify(value.slice(0, 60))}, ` +
          `${value.length} characters)`;
        equal(await store().get(viaSet, now()), value, guarantee('set then get'));
        equal(await store().take(viaAdd, now()), value, guarantee('add then take'));
      }
    });

    if (suite.prune) pruneTests(suite);
    else {
      describe.skip("prune: skipped, the store declares no prune (absent: ['prune'])", () => {
        it('prune: deletes the entries expired at now, and only those', async () => undefined);
      });
    }
  });
}

/** `prune`, with a `now` an hour ahead, so that nothing needs to wait. */
function pruneTests({ it, store }: EphemeralConformanceSuite): void {
  it('prune: deletes the entries expired at now, and only those', async () => {
    const prune = store().prune?.bind(store());
    assert.ok(
      prune,
      "ephemeral.prune is missing: implement it, or declare absent: ['prune'] if the store expires entries itself",
    );
    const t = Date.now();
    const at = t + HOUR;
    const [before, exactly, after, counter] = [key(), key(), key(), key()];
    await store().set(before, 'before', t + MINUTE, t);
    await store().set(exactly, 'exactly', at, t);
    await store().set(after, 'after', at + 1, t);
    await store().increment(counter, t + MINUTE, t);
    const removed = await prune(at);
    assert.ok(
      Number.isInteger(removed) && removed >= 3,
      `ephemeral.prune(now) must resolve how many entries it deleted: at least the 3 this test let expire; got ${removed}`,
    );
    for (const k of [before, exactly, counter]) {
      isNull(
        await store().get(k, t),
        'ephemeral.prune(now) must delete the entries whose expiresAt is at or before now (counters too)',
      );
    }
    equal(
      await store().get(after, at),
      'after',
      'ephemeral.prune(now) must keep the entries still live at now',
    );
  });
}

/** `received` is within TOLERANCE ms of `expected`. */
function near(received: unknown, expected: number, guarantee: string): void {
  assert.ok(
    typeof received === 'number' && Math.abs(received - expected) <= TOLERANCE,
    `${guarantee}\n  expected: ${expected} (epoch ms, ±${TOLERANCE})\n  received: ${String(received)}`,
  );
}
