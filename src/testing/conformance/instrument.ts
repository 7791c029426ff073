import type { Storage } from '../../storage/types.js';

/** One call of a storage method, as a wrapper sees it: `tokens.find`, with its arguments. */
export interface StorageCall {
  /** `store.method`, or `prune`. */
  method: string;
  args: readonly unknown[];
}

/** Decides how a call runs: `run()` calls the adapter; the result is what the caller receives. */
export type AroundCall = (call: StorageCall, run: () => Promise<unknown>) => Promise<unknown>;

const STORES = ['ephemeral', 'clients', 'users', 'grants', 'tokens'] as const;

/** The names of the methods of `target`, its prototype chain included (adapters may be classes). */
function methodNames(target: object): string[] {
  const names = new Set<string>();
  for (
    let proto: object | null = target;
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name !== 'constructor' && typeof (target as Record<string, unknown>)[name] === 'function')
        names.add(name);
    }
  }
  return [...names];
}

/**
 * A view of `storage` whose every method (of the five stores, and `prune`) goes through
 * `around`. Optional methods the adapter lacks stay absent, so the view implements exactly the
 * same parts of the contract as the adapter.
 */
export function instrumentStorage(storage: Storage, around: AroundCall): Storage {
  const wrap = (target: object, prefix: string) => {
    const view: Record<string, unknown> = {};
    for (const name of methodNames(target)) {
      const method = (target as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!;
      view[name] = (...args: unknown[]) =>
        around({ method: `${prefix}${name}`, args }, async () => method.apply(target, args));
    }
    return view;
  };
  const view = Object.fromEntries(
    STORES.map((store) => [store, wrap(storage[store], `${store}.`)]),
  ) as unknown as Storage;
  if (storage.prune) {
    const prune = storage.prune.bind(storage);
    view.prune = (...args) =>
      around({ method: 'prune', args }, () => prune(...args)) as ReturnType<typeof prune>;
  }
  return view;
}
