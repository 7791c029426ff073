import type {
  ClientRecord,
  EphemeralStore,
  FoundTokenRecord,
  GrantRecord,
  Storage,
  StorageRead,
  StorageReadResult,
} from './types.js';

/**
 * Reads the rows a request needs at once: through the storage's {@link Storage.reader} (one
 * round trip) while it reads this storage's own stores, else one read per store, in parallel,
 * and the grant an entry names (`grantOf`) once that entry is read. Either way the answer is the same, keyed by name, and the caller's path does not change.
 */
export async function readRows(
  storage: Storage,
  request: StorageRead,
  now: number,
): Promise<StorageReadResult> {
  const reader = ownReader(storage);
  if (reader !== undefined) return reader.read(request, now);
  const { client, ephemeral = [], token, grantOf, grant: pair } = request;
  // One wait for every read: the entries, then the client, the token and the pair's grant.
  const reads: unknown[] = ephemeral.map((key) => storage.ephemeral.get(key, now));
  reads.push(
    client === undefined ? null : storage.clients.find(client),
    token === undefined ? null : storage.tokens.find(token),
    pair === undefined ? null : storage.grants.list(pair),
  );
  const values = await Promise.all(reads);
  const keyed: Record<string, string | null> = {};
  for (let i = 0; i < ephemeral.length; i++) keyed[ephemeral[i]!] = (values[i] as string | null) ?? null;
  const n = ephemeral.length;
  const [found, foundToken, paired] = values.slice(n) as [
    ClientRecord | null,
    FoundTokenRecord | null,
    GrantRecord[] | null,
  ];
  const grant =
    grantOf === undefined ? (paired?.[0] ?? null) : await namedGrant(storage, keyed[grantOf] ?? null);
  return { client: found, ephemeral: keyed, token: foundToken, grant };
}

/**
 * The grant an entry names (the library's JSON: `grantId`, `userId`, `clientId`), read after the
 * entry: the grant of that user and client when it is the one named, else `null`.
 */
async function namedGrant(storage: Storage, entry: string | null): Promise<GrantRecord | null> {
  let named: Partial<Record<string, unknown>>;
  try {
    named = JSON.parse(entry ?? 'null') as Partial<Record<string, unknown>>;
  } catch {
    return null;
  }
  const { grantId, userId, clientId } = named ?? {};
  if (typeof grantId !== 'string' || typeof userId !== 'string' || typeof clientId !== 'string') return null;
  const [grant] = await storage.grants.list({ userId, clientId });
  return grant !== undefined && grant.grantId === grantId ? grant : null;
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
    reader.stores.tokens === storage.tokens &&
    reader.stores.grants === storage.grants;
  return own ? reader : undefined;
}
