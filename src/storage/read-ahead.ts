import type { BatchOperation, GrantRecord, Storage } from './types.js';

/** A read a request can make ahead, in one batch with its others. */
export type ReadOperation = Extract<
  BatchOperation,
  { op: 'clients.find' | 'tokens.find' | 'grants.find' | 'ephemeral.get' }
>;

/**
 * Reads at once the rows a request will read, known from its parameters before its steps run,
 * with the adapter's {@link Storage.batch} (one round trip on PostgreSQL), and returns a view of
 * `storage` that answers each of those reads once from the batch and everything else from
 * `storage`. A read repeated later (a re-check after a write) goes to the storage again, so it
 * sees the write. Without a batch, or with one read, the storage itself: each read is made when
 * the step that needs it runs.
 */
export async function readAhead(storage: Storage, reads: readonly ReadOperation[]): Promise<Storage> {
  const { batch } = storage;
  if (batch === undefined || reads.length < 2) return storage;
  return (await readAheadWith(storage, [], reads)).storage;
}

/**
 * {@link readAhead} with `writes` run first in the same batch (which must exist): writes whose
 * effect the request hands out only once the reads pass its checks. Resolves the view and the
 * writes' results.
 */
export async function readAheadWith(
  storage: Storage,
  writes: readonly BatchOperation[],
  reads: readonly ReadOperation[],
): Promise<{ storage: Storage; written: unknown[] }> {
  const results: unknown[] = await storage.batch!.call(storage, [...writes, ...reads]);
  const written = results.slice(0, writes.length);
  const ready = new Map<string, unknown>();
  for (let i = 0; i < reads.length; i++) ready.set(keyOf(reads[i]!), results[writes.length + i]);
  const once = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    if (!ready.has(key)) return read();
    const value = ready.get(key) as T;
    ready.delete(key);
    return Promise.resolve(value);
  };

  const { clients, tokens, grants, ephemeral } = storage;
  const view = forwarding(storage, {
    clients: forwarding(clients, {
      find: (clientId: string) => once(keyOf({ op: 'clients.find', clientId }), () => clients.find(clientId)),
    }),
    tokens: forwarding(tokens, {
      find: (tokenHash: string) =>
        once(keyOf({ op: 'tokens.find', tokenHash }), () => tokens.find(tokenHash)),
    }),
    grants: forwarding(grants, {
      list: (filter: { userId?: string; clientId?: string }) => {
        const { userId, clientId } = filter;
        if (userId === undefined || clientId === undefined) return grants.list(filter);
        const key = keyOf({ op: 'grants.find', userId, clientId });
        if (!ready.has(key)) return grants.list(filter);
        const grant = ready.get(key) as GrantRecord | null;
        ready.delete(key);
        return Promise.resolve(grant === null ? [] : [grant]);
      },
    }),
    ephemeral: forwarding(ephemeral, {
      get: (key: string, now: number) =>
        once(keyOf({ op: 'ephemeral.get', key, now }), () => ephemeral.get(key, now)),
    }),
  });
  return { storage: view, written };
}

/**
 * `target` with some members replaced; every other member is the target's own, and a method is
 * called on the target itself (the adapter's `batch` too, which tells its own stores from a
 * composed storage's), so an adapter whose stores are classes with private fields works through
 * the view.
 */
function forwarding<T extends object>(target: T, replaced: Partial<Record<keyof T, unknown>>): T {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(object, key) {
      if (Object.hasOwn(replaced, key)) return replaced[key as keyof T];
      const value: unknown = Reflect.get(object, key, object);
      if (typeof value !== 'function') return value;
      let method = bound.get(key);
      if (method === undefined)
        bound.set(key, (method = (value as (...args: unknown[]) => unknown).bind(object)));
      return method;
    },
  });
}

/** One read's key; ids are length-prefixed, so no two pairs join to the same text. */
function keyOf(read: ReadOperation): string {
  switch (read.op) {
    case 'clients.find':
      return `c${read.clientId}`;
    case 'tokens.find':
      return `t${read.tokenHash}`;
    case 'grants.find':
      return `g${read.userId.length}:${read.userId}${read.clientId}`;
    case 'ephemeral.get':
      return `e${read.key}`;
  }
}
