import type { BatchOperation, Storage } from '../../storage/types.js';

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
  if (storage.batch) {
    // One call, as it is one transaction: a fault fails all of it, a race step runs all of it.
    const batch = storage.batch.bind(storage);
    view.batch = ((operations) =>
      around({ method: 'batch', args: [operations] }, () => batch(operations))) as typeof batch;
  }
  return view;
}

/** A call as the contract's own methods see it, with its result once known. */
export interface MethodCall extends StorageCall {
  result?: unknown;
}

/**
 * The method calls within `call`: a `batch` call is its operations, each as the call of its own
 * method (`ephemeral.take` with `[key, now]`) with its result; any other call is itself. So a check
 * of what a request did holds whether the adapter batches or not.
 */
export function callsWithin(call: MethodCall): MethodCall[] {
  if (call.method !== 'batch') return [call];
  const operations = call.args[0] as readonly BatchOperation[];
  const results = call.result as readonly unknown[] | undefined;
  return operations.map((operation, i) => {
    // `grants.find` is `grants.list({ userId, clientId })`'s one grant.
    if (operation.op === 'grants.find') {
      const grant = results?.[i];
      return {
        method: 'grants.list',
        args: [{ userId: operation.userId, clientId: operation.clientId }],
        ...(results === undefined ? {} : { result: grant === null ? [] : [grant] }),
      };
    }
    return {
      method: operation.op,
      args: argumentsOf(operation),
      ...(results === undefined ? {} : { result: results[i] }),
    };
  });
}

function argumentsOf(operation: Exclude<BatchOperation, { op: 'grants.find' }>): unknown[] {
  switch (operation.op) {
    case 'tokens.save':
      return [operation.token];
    case 'tokens.saveFrom':
      return [operation.from, operation.clientId, operation.token];
    case 'ephemeral.set':
    case 'ephemeral.add':
      return [operation.key, operation.value, operation.expiresAt, operation.now];
    case 'ephemeral.take':
      return [operation.key, operation.now];
    case 'ephemeral.get':
      return [operation.key, operation.now];
    case 'clients.find':
      return [operation.clientId];
    case 'tokens.find':
      return [operation.tokenHash];
  }
}

/** A view of `storage` without its optional `batch`: the library then calls the methods one by one. */
export function withoutBatch(storage: Storage): Storage {
  const view = instrumentStorage(storage, (_call, run) => run());
  delete view.batch;
  return view;
}
