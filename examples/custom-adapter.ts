/**
 * A storage adapter of your own, proven by the conformance kit. Run it in an app that has the
 * package installed (`npx tsx node_modules/openid-oauth-bridge/examples/custom-adapter.ts`), or
 * from a clone:
 *
 *   npx tsx --tsconfig examples/tsconfig.json examples/custom-adapter.ts
 *
 * The "database" here is a set of Maps so that the example runs anywhere; each Map call stands
 * for one call to your database, and the comments say what that call must guarantee there. The
 * short-lived state reuses a built-in ephemeral store (`memoryEphemeralStore()` here; on Redis,
 * `redisEphemeralStore`), so only the four durable stores are written by hand.
 * docs/custom-adapter.md walks through it.
 */
import { after, before, describe, it } from 'node:test';
import type { ClientRecord, Storage } from 'openid-oauth-bridge';
import {
  memoryEphemeralStore,
  type GrantRecord,
  type TokenRecord,
  type UserRecord,
} from 'openid-oauth-bridge/storage';
import { describeStorageConformance } from 'openid-oauth-bridge/testing';

/** A database hands out copies of its rows; so must an adapter (the kit checks it). */
const copy = structuredClone;

export function mapStorage(): Storage {
  const clients = new Map<string, ClientRecord>();
  const users = new Map<string, UserRecord>(); // by `${provider}\n${identifier}`
  const grants = new Map<string, GrantRecord>(); // by `${userId}\n${clientId}`: one per pair
  const tokens = new Map<string, TokenRecord>(); // by tokenHash

  return {
    ephemeral: memoryEphemeralStore(),
    clients: {
      async find(clientId) {
        return copy(clients.get(clientId) ?? null);
      },
      // Operator methods: registerClient and the CLI use them.
      async create(client) {
        // SQL: a primary key on client_id, so a taken id rejects.
        if (clients.has(client.clientId)) throw new Error(`client ${client.clientId} exists`);
        clients.set(client.clientId, copy(client));
      },
      async list() {
        return copy([...clients.values()]).sort(
          (a, b) => a.createdAt - b.createdAt || a.clientId.localeCompare(b.clientId),
        );
      },
      async update(clientId, changes) {
        const client = clients.get(clientId);
        if (!client) return null;
        const defined = Object.entries(changes).filter(([, value]) => value !== undefined);
        const updated: ClientRecord = copy({ ...client, ...Object.fromEntries(defined) });
        clients.set(clientId, updated);
        return copy(updated);
      },
      async remove(clientId) {
        // The client's grants go with it, so a client registered again under this id has none.
        for (const [key, grant] of grants) if (grant.clientId === clientId) grants.delete(key);
        return clients.delete(clientId);
      },
    },
    users: {
      async findOrCreate({ identifier, provider }, newId, now) {
        // SQL: INSERT … ON CONFLICT DO NOTHING, then SELECT: racing first logins get one user.
        const key = `${provider}\n${identifier}`;
        let user = users.get(key);
        if (!user) {
          user = { id: newId, identifier, provider, createdAt: now };
          users.set(key, user);
        }
        return copy(user);
      },
      async find(id) {
        return copy([...users.values()].find((user) => user.id === id) ?? null);
      },
    },
    grants: {
      async list({ userId, clientId }) {
        return [...grants.values()]
          .filter(
            (g) =>
              (userId === undefined || g.userId === userId) &&
              (clientId === undefined || g.clientId === clientId),
          )
          .sort((a, b) => a.createdAt - b.createdAt || a.clientId.localeCompare(b.clientId))
          .map((g) => copy(g));
      },
      async save(grant) {
        // Replaces the grant of the same user and client, whatever its grantId (an upsert).
        grants.set(`${grant.userId}\n${grant.clientId}`, copy(grant));
      },
    },
    tokens: {
      async save(token) {
        tokens.set(token.tokenHash, copy(token));
      },
      async saveAll(saved) {
        // A code's access and refresh token, at once. SQL: one INSERT of every row (ON CONFLICT
        // (token_hash) DO UPDATE), so all of them are saved or none.
        for (const token of saved) tokens.set(token.tokenHash, copy(token));
      },
      async find(tokenHash) {
        // SQL: one SELECT joining the grant by grant_id and the client by client_id.
        const token = tokens.get(tokenHash);
        if (!token) return null;
        const grant = [...grants.values()].find((g) => g.grantId === token.grantId) ?? null;
        return copy({ token, grant, client: clients.get(token.clientId) ?? null });
      },
    },
    // No `prune`: a real adapter deletes expired rows here (declared absent to the kit below).
  };
}

// Run as a program: the conformance kit, on node:test (vitest or mocha work the same way).
if (import.meta.url === `file://${process.argv[1]}`) {
  describeStorageConformance(
    { describe, it, beforeAll: before, afterAll: after },
    {
      name: 'map storage (examples/custom-adapter.ts)',
      createStorage: mapStorage,
      absent: ['prune', 'keys', 'userClaims', 'usage'],
    },
  );
}
