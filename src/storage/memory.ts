import type {
  AccountClaims,
  ClientRecord,
  EphemeralStore,
  GrantRecord,
  KeyStore,
  SigningKeyRecord,
  Storage,
  TokenRecord,
  UserRecord,
  UsageStore,
} from './types.js';
import { memoryUsageStore } from './memory-usage.js';
import { DEFAULT_USAGE_RETENTION_MS } from './usage-types.js';

/** The memory adapter: the whole contract, operator and optional methods included. */
export interface MemoryStorage extends Storage {
  ephemeral: Required<EphemeralStore>;
  clients: Required<Storage['clients']>;
  users: Required<Storage['users']>;
  keys: KeyStore;
  usage: UsageStore;
  prune: NonNullable<Storage['prune']>;
}

/**
 * An in-process storage adapter, for tests, the demo and trying things out. **Not durable**:
 * everything is lost when the process exits, and it cannot be shared by several app instances.
 *
 * Each method mutates synchronously before its promise settles, so single-use operations are
 * atomic by construction within one process.
 *
 * @example
 * const server = createAuthorizationServer({ storage: memoryStorage(), ... });
 */
export function memoryStorage(): MemoryStorage {
  const clients = new Map<string, ClientRecord>();
  const users = new Map<string, UserRecord>();
  const usersByIdentity = new Map<string, string>();
  /** (userId, clientId) → grant, and grantId → the same pair key. */
  const grants = new Map<string, GrantRecord>();
  const grantPairs = new Map<string, string>();
  const tokens = new Map<string, TokenRecord>();
  const keys = new Map<string, SigningKeyRecord>();
  const claimsBySubject = new Map<string, AccountClaims>();
  const ephemeral = memoryEphemeralStore();
  const { prune: pruneUsage, ...usage } = memoryUsageStore();

  const pairKey = (a: string, b: string) => `${a.length}:${a}${b}`;
  const grantById = (grantId: string) => {
    const pair = grantPairs.get(grantId);
    return pair === undefined ? undefined : grants.get(pair);
  };

  return {
    ephemeral,
    clients: {
      async find(clientId) {
        const client = clients.get(clientId);
        return client ? copy(client) : null;
      },
      async create(client) {
        if (clients.has(client.clientId)) throw new Error(`client_id ${client.clientId} is taken`);
        clients.set(client.clientId, copy(client));
      },
      async list(filter = {}) {
        return [...clients.values()]
          .filter((client) => filter.ownerId === undefined || client.ownerId === filter.ownerId)
          .sort((a, b) => a.createdAt - b.createdAt || a.clientId.localeCompare(b.clientId))
          .map(copy);
      },
      async update(clientId, changes) {
        const client = clients.get(clientId);
        if (!client) return null;
        const defined = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
        const updated = { ...client, ...copy(defined) };
        clients.set(clientId, updated);
        return copy(updated);
      },
      async remove(clientId) {
        for (const [key, grant] of grants) {
          if (grant.clientId !== clientId) continue;
          grants.delete(key);
          grantPairs.delete(grant.grantId);
        }
        return clients.delete(clientId);
      },
    },
    users: {
      async findOrCreate(identity, newId, now) {
        const key = pairKey(identity.provider, identity.identifier);
        const existing = usersByIdentity.get(key);
        if (existing !== undefined) return copy(users.get(existing)!);
        const user = {
          id: newId,
          identifier: identity.identifier,
          provider: identity.provider,
          createdAt: now,
        };
        users.set(newId, user);
        usersByIdentity.set(key, newId);
        return copy(user);
      },
      async find(id) {
        const user = users.get(id);
        return user ? copy(user) : null;
      },
      async saveClaims(subject, claims) {
        claimsBySubject.set(subject, copy(claims));
      },
      async findClaims(subject) {
        const claims = claimsBySubject.get(subject);
        return claims ? copy(claims) : null;
      },
    },
    grants: {
      async list(filter) {
        if (filter.userId !== undefined && filter.clientId !== undefined) {
          const grant = grants.get(pairKey(filter.userId, filter.clientId));
          return grant ? [copy(grant)] : [];
        }
        return [...grants.values()]
          .filter(
            (g) =>
              (filter.userId === undefined || g.userId === filter.userId) &&
              (filter.clientId === undefined || g.clientId === filter.clientId),
          )
          .sort((a, b) => a.createdAt - b.createdAt || a.clientId.localeCompare(b.clientId))
          .map(copy);
      },
      async save(grant) {
        const key = pairKey(grant.userId, grant.clientId);
        const replaced = grants.get(key);
        if (replaced && replaced.grantId !== grant.grantId) grantPairs.delete(replaced.grantId);
        grants.set(key, copy(grant));
        grantPairs.set(grant.grantId, key);
      },
    },
    tokens: {
      async save(token) {
        tokens.set(token.tokenHash, copy(token));
      },
      async saveAll(saved) {
        for (const token of saved) tokens.set(token.tokenHash, copy(token));
      },
      async find(tokenHash) {
        const token = tokens.get(tokenHash);
        if (!token) return null;
        const grant = grantById(token.grantId);
        const client = clients.get(token.clientId);
        return {
          token: copy(token),
          grant: grant ? copy(grant) : null,
          client: client ? copy(client) : null,
        };
      },
    },
    keys: {
      async list() {
        return [...keys.values()]
          .sort((a, b) => a.createdAt - b.createdAt || a.kid.localeCompare(b.kid))
          .map(copy);
      },
      async save(key) {
        keys.set(key.kid, copy(key));
      },
    },
    usage,
    async prune(now, options = {}) {
      const retention = options.revokedGrantRetentionMs ?? 30 * 86_400_000;
      let clientCount = 0;
      for (const [clientId, client] of clients) {
        if (client.unusedExpiresAt == null || client.unusedExpiresAt > now) continue;
        for (const [key, grant] of grants) {
          if (grant.clientId !== clientId) continue;
          grants.delete(key);
          grantPairs.delete(grant.grantId);
        }
        clients.delete(clientId);
        clientCount++;
      }
      let tokenCount = 0;
      for (const [hash, token] of tokens) {
        const grant = grantById(token.grantId);
        const dead =
          (token.expiresAt !== null && token.expiresAt <= now) ||
          !grant ||
          grant.revokedAt !== null ||
          !clients.has(token.clientId);
        if (dead) {
          tokens.delete(hash);
          tokenCount++;
        }
      }
      let grantCount = 0;
      for (const [key, grant] of grants) {
        if (grant.revokedAt !== null && grant.revokedAt <= now - retention) {
          grants.delete(key);
          grantPairs.delete(grant.grantId);
          grantCount++;
        }
      }
      return {
        ephemeral: await ephemeral.prune(now),
        tokens: tokenCount,
        grants: grantCount,
        clients: clientCount,
        usage: pruneUsage(now, options.usageRetentionMs ?? DEFAULT_USAGE_RETENTION_MS),
      };
    },
  };
}

/**
 * An in-process {@link EphemeralStore}: for one instance, tests and the demo. Expired entries
 * are absent at once and deleted by `prune`.
 */
export function memoryEphemeralStore(): Required<EphemeralStore> {
  const entries = new Map<string, { value: string; expiresAt: number }>();
  const live = (key: string, now: number) => {
    const entry = entries.get(key);
    return entry && entry.expiresAt > now ? entry : undefined;
  };
  return {
    async get(key, now) {
      return live(key, now)?.value ?? null;
    },
    async set(key, value, expiresAt) {
      entries.set(key, { value, expiresAt });
    },
    async add(key, value, expiresAt, now) {
      if (live(key, now)) return false;
      entries.set(key, { value, expiresAt });
      return true;
    },
    async take(key, now) {
      const entry = live(key, now);
      if (!entry) return null;
      entries.delete(key);
      return entry.value;
    },
    async replace(key, expected, value, expiresAt, now) {
      if (live(key, now)?.value !== expected) return false;
      entries.set(key, { value, expiresAt });
      return true;
    },
    async increment(key, expiresAt, now) {
      const entry = live(key, now);
      const next = entry
        ? { value: String(Number(entry.value) + 1), expiresAt: entry.expiresAt }
        : { value: '1', expiresAt };
      entries.set(key, next);
      return { count: Number(next.value), expiresAt: next.expiresAt };
    },
    async delete(key) {
      entries.delete(key);
    },
    async prune(now) {
      let count = 0;
      for (const [key, entry] of entries) {
        if (entry.expiresAt <= now) {
          entries.delete(key);
          count++;
        }
      }
      return count;
    },
  };
}

/** Records go in and out as copies, so a caller never holds a reference to the stored row. */
function copy<T extends object>(record: T): T {
  const copied = { ...record } as Record<string, unknown>;
  for (const key in copied) {
    const value = copied[key];
    if (Array.isArray(value)) copied[key] = [...(value as unknown[])];
  }
  return copied as T;
}
