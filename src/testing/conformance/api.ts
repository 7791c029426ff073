import type { ClientRecord, EphemeralStore, Storage } from '../../storage/types.js';

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

/**
 * A part of the contract an adapter may leave out:
 * - `'prune'`: `storage.prune`;
 * - `'ephemeralPrune'`: `storage.ephemeral.prune` (a store with native expiry, such as Redis, has
 *   none; `storage.prune` then cleans the durable stores only);
 * - `'clientAdmin'`: `clients.create`, `clients.list`, `clients.update` and `clients.remove`
 *   (clients managed elsewhere); the kit then needs {@link StorageConformanceOptions.putClient};
 * - `'userFind'`: `users.find`;
 * - `'keys'`: the `keys` store (OpenID Connect signing keys kept by the library);
 * - `'userClaims'`: `users.saveClaims` and `users.findClaims` (OpenID Connect's UserInfo claims);
 * - `'usage'`: the `usage` store (per-app usage: day counts and last use).
 */
export type OptionalPart =
  'prune' | 'ephemeralPrune' | 'clientAdmin' | 'userFind' | 'keys' | 'userClaims' | 'usage';

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
   * without `prune` fails until it says so here.
   */
  absent?: readonly OptionalPart[];
  /**
   * Required with `absent: ['clientAdmin']`: how the kit registers a client (or replaces it, to
   * disable it) in the system that manages your clients, so that `clients.find` and
   * `tokens.find` can return it.
   */
  putClient?: (storage: S, client: ClientRecord) => Promise<void>;
  /** Tunes the race tests (fast-check); see {@link RaceOptions}. */
  races?: RaceOptions;
}

/** How the race tests explore interleavings. */
export interface RaceOptions {
  /**
   * Runs per race property (there are two: rotation off and on), each one an interleaving chosen
   * by fast-check's scheduler. Default 100: about two seconds on PostgreSQL. Raise it when
   * hunting a race.
   */
  runs?: number;
  /** Replays a failure: the `seed` and `path` its message gives. */
  seed?: number;
  path?: string;
  /** Stops exploring (not failing) after this long per property, in ms. Default 15000. */
  timeLimitMs?: number;
}

/** What every group of conformance tests receives. */
export interface ConformanceSuite {
  it: ConformanceTestApi['it'];
  describe: ConformanceTestApi['describe'];
  /** `describe` for a present optional part, `describe.skip` (reason in the title) for an absent one. */
  part: (part: OptionalPart) => ConformanceTestApi['describe'];
  /** Whether the adapter implements an optional part. */
  has: (part: OptionalPart) => boolean;
  /** The storage under test; throws if `createStorage` has not run or failed. */
  storage(): Storage;
  /** Registers or replaces a client, through `clients.create`/`update` or `putClient`. */
  putClient(client: ClientRecord, replace?: boolean): Promise<void>;
  /** The race options, defaults applied. */
  races: Required<Pick<RaceOptions, 'runs' | 'timeLimitMs'>> & Pick<RaceOptions, 'seed' | 'path'>;
  /** Adds to the count of interleavings the race tests explored. */
  explored(runs: number, distinct: number, interrupted: boolean): void;
}

/** What `describeStorageConformance` returns: filled in as the tests run. */
export interface ConformanceStats {
  /** Property runs of the race tests (each one an interleaving chosen by the scheduler). */
  raceRuns: number;
  /** Distinct interleavings among them (two runs that released the same calls in the same order count once). */
  interleavings: number;
  /** Race properties stopped by `races.timeLimitMs` before their runs were done. */
  interrupted: number;
}

/** What the ephemeral store's tests receive (`ephemeralTests`, `replaceTests`). */
export interface EphemeralConformanceSuite {
  it: ConformanceTestApi['it'];
  describe: ConformanceTestApi['describe'];
  /** The store under test; throws if it was not created. */
  store(): EphemeralStore;
  /** Whether the store implements the optional `prune`; its tests are skipped, with the reason, if not. */
  prune: boolean;
}
