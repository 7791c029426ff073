import type { Storage, StorageRead, StorageReadResult } from './types.js';

/**
 * Reads the rows a request needs at once: through the storage's {@link Storage.reader} (one
 * round trip) while it reads this storage's own stores, else one read per store, in parallel.
 * Either way the answer is the same, and the caller's path does not change.
 */
export function readRows(storage: Storage, request: StorageRead, now: number): Promise<StorageReadResult> {
  const reader = readerOf(storage);
  if (reader !== undefined) return reader.read(request, now);
  const { client, ephemeral = [], token } = request;
  return Promise.all([
    client === undefined ? null : storage.clients.find(client),
    Promise.all(ephemeral.map((key) => storage.ephemeral.get(key, now))),
    token === undefined ? null : storage.tokens.find(token),
  ]).then(([client, ephemeral, token]) => ({ client, ephemeral, token }));
}

/** The storage's reader while it reads this storage's own stores (see {@link Storage.reader}). */
export function readerOf(storage: Storage): Storage['reader'] {
  const { reader } = storage;
  const own =
    reader !== undefined &&
    reader.stores.ephemeral === storage.ephemeral &&
    reader.stores.clients === storage.clients &&
    reader.stores.tokens === storage.tokens;
  return own ? reader : undefined;
}
