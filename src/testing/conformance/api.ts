import type { Storage } from '../../storage/types.js';

/** Registers a suite or a test: the shape shared by vitest, jest, mocha and `node:test`. */
export type RegisterBlock = (name: string, fn: () => void) => unknown;

/**
 * The test framework's functions, passed in so that the kit imports no test framework itself.
 * vitest and jest: `{ describe, it, beforeAll, afterAll }`. mocha and `node:test` name the hooks
 * `before` and `after`: `{ describe, it, beforeAll: before, afterAll: after }`.
 */
export interface ConformanceTestApi {
  describe: RegisterBlock & { skip: RegisterBlock };
  it: (name: string, fn: () => Promise<void>) => unknown;
  beforeAll: (fn: () => Promise<void>) => unknown;
  afterAll: (fn: () => Promise<void>) => unknown;
}

/** A part of the contract an adapter may leave out. */
export type OptionalPart = 'sessions' | 'prune';

/**
 * What `describeStorageConformance` needs to know about the adapter under test. `S` is your
 * adapter's own type, so that `close` can call its own methods.
 */
export interface StorageConformanceOptions<S extends Storage = Storage> {
  /** Names the adapter in the suite's title, e.g. `'postgres'`. */
  name: string;
  /**
   * Creates the storage under test, once for the whole suite (after migrations, if any). The
   * database need not be empty: every test uses fresh random ids and hashes.
   */
  createStorage: () => S | Promise<S>;
  /** Releases what `createStorage` opened (connections, pools), after the last test. */
  close?: (storage: S) => void | Promise<void>;
  /**
   * The optional parts the adapter does not implement. Their tests are reported as skipped, with
   * the reason, and the kit checks that they really are absent. Default: none, so an adapter
   * without `sessions` or `prune` fails until it says so here.
   */
  absent?: readonly OptionalPart[];
}

/** What every group of conformance tests receives. */
export interface ConformanceSuite {
  it: ConformanceTestApi['it'];
  describe: ConformanceTestApi['describe'];
  /** The storage under test; throws if `createStorage` has not run or failed. */
  storage(): Storage;
}
