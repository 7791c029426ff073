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
  const results = await batch.call(storage, reads);
  const ready = new Map<string, unknown>();
  for (let i = 0; i < reads.length; i++) ready.set(keyOf(reads[i]!), results[i]);
  const once = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    if (!ready.has(key)) return read();
    const value = ready.get(key) as T;
    ready.delete(key);
    return Promise.resolve(value);
  };

  const { clients, tokens, grants, ephemeral } = storage;
  const view = Object.create(storage) as Storage;
  view.clients = withMethod(clients, 'find', (clientId) =>
    once(keyOf({ op: 'clients.find', clientId }), () => clients.find(clientId)),
  );
  view.tokens = withMethod(tokens, 'find', (tokenHash) =>
    once(keyOf({ op: 'tokens.find', tokenHash }), () => tokens.find(tokenHash)),
  );
  view.grants = withMethod(grants, 'list', (filter) => {
    const { userId, clientId } = filter;
    if (userId === undefined || clientId === undefined) return grants.list(filter);
    const key = keyOf({ op: 'grants.find', userId, clientId });
    if (!ready.has(key)) return grants.list(filter);
    const grant = ready.get(key) as GrantRecord | null;
    ready.delete(key);
    return Promise.resolve(grant === null ? [] : [grant]);
  });
  view.ephemeral = withMethod(ephemeral, 'get', (key, now) =>
    once(keyOf({ op: 'ephemeral.get', key, now }), () => ephemeral.get(key, now)),
  );
  // The adapter's batch, on the adapter: it tells its own stores from a composed storage's.
  view.batch = ((operations) => batch.call(storage, operations)) as typeof batch;
  return view;
}

/** `store` with one method replaced, the others (and `this` in them) as they were. */
function withMethod<S extends object, K extends keyof S>(store: S, name: K, method: S[K]): S {
  const view = Object.create(store) as S;
  view[name] = method;
  return view;
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
