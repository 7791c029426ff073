import assert from 'node:assert/strict';
import type { EphemeralStore } from '../../storage/types.js';
import type { ConformanceTestApi } from './api.js';
import { ephemeralTests } from './ephemeral.js';

/**
 * What {@link describeEphemeralStoreConformance} needs to know about the store under test. `S` is
 * your store's own type, so that `close` can call its own methods.
 */
export interface EphemeralStoreConformanceOptions<S extends EphemeralStore = EphemeralStore> {
  /** Names the store in the suite's title, e.g. `'redis'`. */
  name: string;
  /** Creates the store under test, once for the whole suite. It need not be empty: every test uses fresh keys. */
  createStore: () => S | Promise<S>;
  /** Releases what `createStore` opened (connections), after the last test. */
  close?: (store: S) => void | Promise<void>;
  /**
   * `['prune']` for a store without `prune` (one whose entries expire by themselves, like Redis):
   * its test is then reported as skipped, and the kit checks that `prune` really is absent.
   * Default: none, so a store without `prune` fails until it says so here.
   */
  absent?: readonly 'prune'[];
}

/**
 * Registers the conformance suite of an {@link EphemeralStore} alone: one test per guarantee of
 * each method (`get`, `set`, `add`, `take`, `increment`, `delete`, and the optional `prune`).
 * Use it for a store you plug into a storage adapter as its `ephemeral`; the storage conformance
 * kit runs the same tests on `storage.ephemeral`.
 *
 * The store is created once, in a `beforeAll` hook, and closed after the last test. Every test
 * uses fresh random keys and `now` = `Date.now()`, and waits in real time (under a second) for
 * short expiries, so a store with native expiry passes. Single-use operations and counters are
 * raced by 50 concurrent callers. Assertions use `node:assert/strict`; a failure names the
 * method and the guarantee it broke.
 *
 * The kit imports no test framework: pass yours in (mocha and `node:test`:
 * `{ describe, it, beforeAll: before, afterAll: after }`).
 *
 * @example
 * import { afterAll, beforeAll, describe, it } from 'vitest';
 * import { describeEphemeralStoreConformance } from 'openid-oauth-bridge/testing';
 *
 * describeEphemeralStoreConformance(
 *   { describe, it, beforeAll, afterAll },
 *   { name: 'my store', createStore: () => myEphemeralStore(), absent: ['prune'] },
 * );
 */
export function describeEphemeralStoreConformance<S extends EphemeralStore>(
  test: ConformanceTestApi,
  options: EphemeralStoreConformanceOptions<S>,
): void {
  const pruneAbsent = options.absent?.includes('prune') ?? false;
  test.describe(`ephemeral store conformance: ${options.name}`, () => {
    let created: S | undefined;
    test.beforeAll(async () => {
      created = await options.createStore();
    });
    test.afterAll(async () => {
      if (created && options.close) await options.close(created);
    });
    const store = () => {
      assert.ok(
        created,
        `createStore() of "${options.name}" did not run or failed: see the error of the beforeAll hook`,
      );
      return created;
    };

    ephemeralTests({ it: test.it, describe: test.describe, store, prune: !pruneAbsent });
    if (pruneAbsent) {
      test.it("prune, declared absent (absent: ['prune']), is absent", async () => {
        assert.ok(
          store().prune === undefined,
          "absent lists 'prune' but the store has prune: its guarantees would go untested. Remove 'prune' from absent.",
        );
      });
    }
  });
}
