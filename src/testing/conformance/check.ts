import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';

/*
 * Assertions whose failure message starts with the guarantee that broke, in the words of the
 * storage contract, then shows what was expected and what the adapter gave.
 */

function show(value: unknown): string {
  if (value === undefined) return 'undefined (missing)';
  if (typeof value === 'bigint') return `${value}n`;
  return JSON.stringify(value);
}

/** A value as a key of {@link tally}: strings as they are, anything else as JSON. */
function label(value: unknown): string {
  return typeof value === 'string' ? value : show(value);
}

function explain(guarantee: string, expected: unknown, received: unknown): string {
  return `${guarantee}\n  expected: ${show(expected)}\n  received: ${show(received)}`;
}

/** `received` is exactly `expected` (`===`). */
export function equal<T>(received: unknown, expected: T, guarantee: string): asserts received is T {
  assert.strictEqual(received, expected, explain(guarantee, expected, received));
}

/** `received` is `null` (not `undefined`, not an empty object). */
export function isNull(received: unknown, guarantee: string): asserts received is null {
  equal(received, null, guarantee);
}

/**
 * `received` has every field of `expected` with the same value and type (a `null` stays `null`,
 * a number stays a number, arrays keep their order). Extra fields are allowed. The message lists
 * the fields that differ.
 */
export function sameRecord<T extends object>(
  received: unknown,
  expected: T,
  guarantee: string,
): asserts received is T {
  assert.ok(received !== null && typeof received === 'object', explain(guarantee, expected, received));
  const fields = Object.entries(expected).map(([field, value]) => ({
    field,
    expected: value as unknown,
    received: (received as Record<string, unknown>)[field],
  }));
  const differing = fields.filter((entry) => !isDeepStrictEqual(entry.received, entry.expected));
  const lines = differing.map(
    (entry) => `  ${entry.field}: expected ${show(entry.expected)}, received ${show(entry.received)}`,
  );
  assert.deepStrictEqual(
    Object.fromEntries(fields.map((entry) => [entry.field, entry.received])),
    expected,
    `${guarantee}\n${lines.join('\n')}`,
  );
}

/** `received` holds the same strings as `expected`, in any order, each once. */
export function sameMembers(
  received: readonly string[],
  expected: readonly string[],
  guarantee: string,
): void {
  assert.ok(Array.isArray(received), explain(guarantee, expected, received));
  const sorted = [...received].sort();
  assert.deepStrictEqual(sorted, [...new Set(expected)].sort(), explain(guarantee, expected, received));
}

/** The call rejects (or throws). */
export async function rejects(call: () => Promise<unknown>, guarantee: string): Promise<void> {
  const outcome = await Promise.resolve()
    .then(call)
    .then(
      () => 'resolved',
      () => 'rejected',
    );
  assert.strictEqual(outcome, 'rejected', `${guarantee}\n  the call resolved instead of rejecting`);
}

/**
 * Starts `calls` calls at once and waits for all. Every call must resolve: an adapter may not
 * answer a race with an error (a serialization failure, a lock timeout); it must retry instead.
 */
export async function race<T>(
  method: string,
  calls: number,
  call: (index: number) => Promise<T>,
): Promise<T[]> {
  const start = (index: number) => Promise.resolve(index).then(call);
  const settled = await Promise.allSettled(Array.from({ length: calls }, (_, index) => start(index)));
  const failures = settled.filter((result) => result.status === 'rejected');
  const first = failures[0];
  if (first) {
    assert.fail(
      `${method}: ${failures.length} of ${calls} concurrent calls rejected; every concurrent call must resolve ` +
        `(retry serialization failures inside the adapter).\n  first error: ${String(first.reason)}`,
    );
  }
  return settled.map((result) => (result as PromiseFulfilledResult<T>).value);
}

/** How many times each value occurs, for messages such as `{"consumed":3,"replayed":47}`. */
export function tally(values: readonly unknown[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) {
    const key = label(value);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** Exactly one of `values` equals `winner`, and every other value equals `loser`. */
export function oneWinner(
  values: readonly unknown[],
  winner: unknown,
  loser: unknown,
  guarantee: string,
): void {
  const counts = tally(values);
  const expected = { [label(winner)]: 1, [label(loser)]: values.length - 1 };
  assert.deepStrictEqual(counts, expected, explain(guarantee, expected, counts));
}
