import { StorageUnavailableError } from '../../errors/storage-unavailable.js';
import type { Storage } from '../../storage/types.js';
import { instrumentStorage } from './instrument.js';

/**
 * Where an injected fault strikes: `'before'` the call reaches the adapter (a connection that
 * could not be opened), or `'after'` it ran (the answer was lost on the way back, as when a
 * connection drops after the database committed).
 */
export type FaultTiming = 'before' | 'after';

/** A call made through {@link withFaults}, numbered from 1 since the last `reset`. */
export interface RecordedCall {
  n: number;
  /** `store.method`, e.g. `ephemeral.take`, or `prune`. */
  method: string;
  args: readonly unknown[];
  /** `ok`: resolved `result`; `failed`: the adapter rejected; `injected`: a fault made it fail. */
  outcome: 'ok' | 'failed' | 'injected';
  result?: unknown;
  /** Whether the adapter ran the call (false only for a fault injected `'before'`). */
  ran: boolean;
}

/** A storage view that can make chosen calls fail. See {@link withFaults}. */
export interface FaultyStorage {
  /** The view to hand to the code under test. */
  readonly storage: Storage;
  /** Every call since creation or the last {@link FaultyStorage.reset}, in order. */
  readonly calls: readonly RecordedCall[];
  /**
   * Makes call number `n` (counted from 1 since the last reset) fail with a
   * `StorageUnavailableError`, `'before'` (default) or `'after'` it reaches the adapter. Returns
   * the same object, for chaining.
   */
  failCall(n: number, timing?: FaultTiming): FaultyStorage;
  /** Forgets the calls and the planned faults. */
  reset(): void;
}

/**
 * Wraps a storage adapter so that chosen calls fail as a database outage would: with a
 * `StorageUnavailableError`, before or after the adapter ran them. Counts and records every call,
 * so a test can run an operation once cleanly, count its calls N, then fail each of them in turn.
 *
 * @example
 * const faulty = withFaults(storage);
 * await exchange(faulty.storage);                  // a clean run
 * const n = faulty.calls.length;
 * for (let k = 1; k <= n; k++) {
 *   const run = withFaults(storage).failCall(k);   // fails the k-th call
 *   await exchange(run.storage).catch(() => retry(storage));
 * }
 */
export function withFaults(storage: Storage): FaultyStorage {
  let calls: RecordedCall[] = [];
  let planned = new Map<number, FaultTiming>();
  const injected = (call: RecordedCall, timing: FaultTiming) =>
    new StorageUnavailableError(
      `Injected fault: call ${call.n} (${call.method}) failed ${timing === 'before' ? 'before reaching' : 'after running in'} the adapter.`,
    );
  const faulty: FaultyStorage = {
    storage: instrumentStorage(storage, async ({ method, args }, run) => {
      const call: RecordedCall = { n: calls.length + 1, method, args, outcome: 'ok', ran: true };
      calls.push(call);
      const timing = planned.get(call.n);
      if (timing === 'before') {
        call.outcome = 'injected';
        call.ran = false;
        throw injected(call, timing);
      }
      try {
        call.result = await run();
      } catch (error) {
        call.outcome = 'failed';
        throw error;
      }
      if (timing === 'after') {
        call.outcome = 'injected';
        throw injected(call, timing);
      }
      return call.result;
    }),
    get calls() {
      return calls;
    },
    failCall(n, timing = 'before') {
      planned.set(n, timing);
      return faulty;
    },
    reset() {
      calls = [];
      planned = new Map();
    },
  };
  return faulty;
}
