import type { EphemeralStore, Storage, StorageRead, StorageReadResult } from './types.js';

/**
 * Reads the rows a request needs at once: through the storage's {@link Storage.reader} (one
 * round trip) while it reads this storage's own stores, else one read per store, in parallel.
 * Either way the answer is the same, keyed by name, and the caller's path does not change.
 */
export function readRows(storage: Storage, request: StorageRead, now: number): Promise<StorageReadResult> {
  const reader = ownReader(storage);
  if (reader !== undefined) return reader.read(request, now);
  const { client, ephemeral = [], token } = request;
  return Promise.all([
    client === undefined ? null : storage.clients.find(client),
    Promise.all(ephemeral.map((key) => storage.ephemeral.get(key, now))),
    token === undefined ? null : storage.tokens.find(token),
  ]).then(([client, values, token]) => {
    const keyed: Record<string, string | null> = {};
    for (let i = 0; i < ephemeral.length; i++) keyed[ephemeral[i]!] = values[i] ?? null;
    return { client, ephemeral: keyed, token };
  });
}

/**
 * A storage made of a durable adapter (SQL, or your own) and the ephemeral store of another
 * (Redis, say, shared by every instance): the one way to compose them. The durable adapter's
 * {@link Storage.reader} reads its own ephemeral store, so it is kept only when `ephemeral` is that
 * very store; otherwise the library reads one by one.
 *
 * @example
 * const storage = composeStorage(await connectStorage(process.env.DATABASE_URL, { migrate: true }), {
 *   ephemeral: redisEphemeralStore(redis, { keyPrefix: 'oauth:' }),
 * });
 */
export function composeStorage<S extends Storage>(durable: S, parts: { ephemeral: EphemeralStore }): S {
  const { reader, ...rest } = durable;
  const own = reader !== undefined && parts.ephemeral === reader.stores.ephemeral;
  return { ...rest, ephemeral: parts.ephemeral, ...(own ? { reader } : {}) } as S;
}

/**
 * The storage's reader while it reads this storage's own stores: a storage whose stores were
 * replaced or wrapped (a fault injector, an instrumented view, `{ ...sql, ephemeral: redis }`
 * made by hand) is read one by one, through the stores it has.
 */
export function ownReader(storage: Storage): Storage['reader'] {
  const { reader } = storage;
  const own =
    reader !== undefined &&
    reader.stores.ephemeral === storage.ephemeral &&
    reader.stores.clients === storage.clients &&
    reader.stores.tokens === storage.tokens;
  return own ? reader : undefined;
}
