/**
 * The conformance kit against hand-written adapter bugs: each mutant wraps `memoryStorage()` and
 * breaks one guarantee of the contract; the kit, run through a collecting test API, must fail at
 * least one test for each, and none for the unmodified adapter. The table this prints (bug →
 * tests that caught it) is the one in src/testing/conformance/README.md.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { memoryStorage, type MemoryStorage } from '../../src/storage/memory.js';
import { readRows } from '../../src/storage/read.js';
import type { ClientRecord, GrantRecord, Storage, TokenRecord, UserRecord } from '../../src/storage/types.js';
import {
  describeStorageConformance,
  type ConformanceStats,
  type ConformanceTestApi,
} from '../../src/testing/index.js';

/** A bug, written as a wrapper that replaces some methods of a fresh memory adapter. */
interface Mutant {
  bug: string;
  make(): Storage;
}

/** `base` with some methods of some stores replaced. */
function patch(base: MemoryStorage, stores: Partial<{ [K in keyof Storage]: Partial<Storage[K]> }>): Storage {
  return {
    ephemeral: { ...base.ephemeral, ...stores.ephemeral },
    clients: { ...base.clients, ...stores.clients },
    users: { ...base.users, ...stores.users },
    grants: { ...base.grants, ...stores.grants },
    tokens: { ...base.tokens, ...stores.tokens },
    keys: base.keys,
    prune: (stores.prune as Storage['prune']) ?? base.prune,
  };
}

const tick = () => sleep(1);

const mutants: Mutant[] = [
  {
    bug: 'ephemeral.take reads, then deletes: two racing callers both receive the value',
    make() {
      const base = memoryStorage();
      return patch(base, {
        ephemeral: {
          async take(key, now) {
            const value = await base.ephemeral.get(key, now);
            await tick();
            await base.ephemeral.delete(key);
            return value;
          },
        },
      });
    },
  },
  {
    bug: 'clients.find looks an id up in a plain object: __proto__ and constructor answer what it inherits',
    make() {
      const base = memoryStorage();
      const cache: Record<string, ClientRecord> = {};
      return patch(base, {
        clients: {
          async find(clientId) {
            return cache[clientId] ?? (await base.clients.find(clientId));
          },
        },
      });
    },
  },
  {
    bug: 'ephemeral.add always stores and resolves true',
    make() {
      const base = memoryStorage();
      return patch(base, {
        ephemeral: {
          async add(key, value, expiresAt, now) {
            await base.ephemeral.set(key, value, expiresAt, now);
            return true;
          },
        },
      });
    },
  },
  {
    bug: 'ephemeral.increment restarts at 1 while the counter lives',
    make() {
      const base = memoryStorage();
      return patch(base, {
        ephemeral: {
          async increment(key, expiresAt, now) {
            await base.ephemeral.set(key, '1', expiresAt, now);
            return { count: 1, expiresAt };
          },
        },
      });
    },
  },
  {
    bug: 'ephemeral.increment reads then writes: racing callers lose counts',
    make() {
      const base = memoryStorage();
      return patch(base, {
        ephemeral: {
          async increment(key, expiresAt, now) {
            const current = await base.ephemeral.get(key, now);
            await tick();
            const count = current === null ? 1 : Number(current) + 1;
            await base.ephemeral.set(key, String(count), expiresAt, now);
            return { count, expiresAt };
          },
        },
      });
    },
  },
  {
    bug: 'ephemeral.get ignores expiry',
    make() {
      const base = memoryStorage();
      return patch(base, { ephemeral: { get: (key) => base.ephemeral.get(key, 0) } });
    },
  },
  {
    bug: 'ephemeral.set keeps the old expiry of a live key',
    make() {
      const base = memoryStorage();
      const expiries = new Map<string, number>();
      return patch(base, {
        ephemeral: {
          async set(key, value, expiresAt, now) {
            const old = expiries.get(key);
            const kept = old !== undefined && old > now ? old : expiresAt;
            expiries.set(key, kept);
            await base.ephemeral.set(key, value, kept, now);
          },
        },
      });
    },
  },
  {
    bug: 'ephemeral.delete does nothing',
    make() {
      const base = memoryStorage();
      return patch(base, { ephemeral: { delete: async () => undefined } });
    },
  },
  {
    bug: 'clients.find compares client ids case-insensitively',
    make() {
      const base = memoryStorage();
      return patch(base, {
        clients: {
          async find(clientId) {
            const all = await base.clients.list();
            return all.find((client) => client.clientId.toLowerCase() === clientId.toLowerCase()) ?? null;
          },
        },
      });
    },
  },
  {
    bug: 'clients.find (and the token join) still return a removed client',
    make() {
      const base = memoryStorage();
      const removed = new Map<string, ClientRecord>();
      return patch(base, {
        clients: {
          async find(clientId) {
            return (await base.clients.find(clientId)) ?? removed.get(clientId) ?? null;
          },
          async remove(clientId) {
            const client = await base.clients.find(clientId);
            if (client) removed.set(clientId, client);
            return base.clients.remove(clientId);
          },
        },
        tokens: {
          async find(hash) {
            const found = await base.tokens.find(hash);
            return found && { ...found, client: found.client ?? removed.get(found.token.clientId) ?? null };
          },
        },
      });
    },
  },
  {
    bug: 'clients.update writes the keys set to undefined (erasing the fields)',
    make() {
      const base = memoryStorage();
      return patch(base, {
        clients: {
          async update(clientId, changes) {
            const client = await base.clients.find(clientId);
            if (!client) return null;
            const updated = { ...client, ...changes } as ClientRecord;
            await base.clients.remove(clientId);
            await base.clients.create(updated);
            return updated;
          },
        },
      });
    },
  },
  {
    bug: 'clients.remove resolves true for an absent client',
    make() {
      const base = memoryStorage();
      return patch(base, {
        clients: {
          async remove(clientId) {
            await base.clients.remove(clientId);
            return true;
          },
        },
      });
    },
  },
  {
    bug: 'clients.list ordered by clientId only',
    make() {
      const base = memoryStorage();
      return patch(base, {
        clients: {
          list: async () => (await base.clients.list()).sort((a, b) => a.clientId.localeCompare(b.clientId)),
        },
      });
    },
  },
  {
    bug: 'users.findOrCreate looks up, then creates: racing first logins create two users',
    make() {
      const base = memoryStorage();
      const users = new Map<string, UserRecord>();
      return patch(base, {
        users: {
          async findOrCreate(identity, newId, now) {
            const key = JSON.stringify([identity.provider, identity.identifier]);
            const existing = users.get(key);
            await tick();
            if (existing) return { ...existing };
            const user = { id: newId, ...identity, createdAt: now };
            users.set(key, user);
            return { ...user };
          },
        },
      });
    },
  },
  {
    bug: 'users.findOrCreate keys users by provider + identifier joined without a separator',
    make() {
      const base = memoryStorage();
      const users = new Map<string, UserRecord>();
      return patch(base, {
        users: {
          async findOrCreate(identity, newId, now) {
            const key = identity.provider + identity.identifier;
            const user = users.get(key) ?? { id: newId, ...identity, createdAt: now };
            users.set(key, user);
            return { ...user };
          },
        },
      });
    },
  },
  {
    bug: 'grants.save with another grantId inserts a second row instead of replacing',
    make() {
      const base = memoryStorage();
      const stale: GrantRecord[] = [];
      const matches = (g: GrantRecord, f: { userId?: string; clientId?: string }) =>
        (f.userId === undefined || g.userId === f.userId) &&
        (f.clientId === undefined || g.clientId === f.clientId);
      return patch(base, {
        grants: {
          async save(grant) {
            const [current] = await base.grants.list({ userId: grant.userId, clientId: grant.clientId });
            if (current && current.grantId !== grant.grantId) stale.push(current);
            await base.grants.save(grant);
          },
          async list(filter) {
            const rows = [...(await base.grants.list(filter)), ...stale.filter((g) => matches(g, filter))];
            return rows.sort((a, b) => a.createdAt - b.createdAt || a.clientId.localeCompare(b.clientId));
          },
        },
        tokens: {
          async find(hash) {
            const found = await base.tokens.find(hash);
            return (
              found && {
                ...found,
                grant: found.grant ?? stale.find((g) => g.grantId === found.token.grantId) ?? null,
              }
            );
          },
        },
      });
    },
  },
  {
    bug: 'grants.list ignores the clientId filter when a userId is given',
    make() {
      const base = memoryStorage();
      return patch(base, {
        grants: {
          list: (filter) =>
            base.grants.list(filter.userId === undefined ? filter : { userId: filter.userId }),
        },
      });
    },
  },
  {
    bug: 'grants.list leaves out revoked grants',
    make() {
      const base = memoryStorage();
      return patch(base, {
        grants: {
          list: async (filter) => (await base.grants.list(filter)).filter((g) => g.revokedAt === null),
        },
      });
    },
  },
  {
    bug: 'grants.list newest first',
    make() {
      const base = memoryStorage();
      return patch(base, { grants: { list: async (filter) => (await base.grants.list(filter)).reverse() } });
    },
  },
  {
    bug: 'grants.save resolves before the write is visible',
    make() {
      const base = memoryStorage();
      return patch(base, {
        grants: {
          async save(grant) {
            const copy = structuredClone(grant);
            setTimeout(() => void base.grants.save(copy), 5);
          },
        },
      });
    },
  },
  {
    bug: 'tokens.find omits the grant join (grant always null)',
    make() {
      const base = memoryStorage();
      return patch(base, {
        tokens: {
          find: async (hash) => ((found) => found && { ...found, grant: null })(await base.tokens.find(hash)),
        },
      });
    },
  },
  {
    bug: "tokens.find joins the grant of the token's user and client instead of its grantId",
    make() {
      const base = memoryStorage();
      return patch(base, {
        tokens: {
          async find(hash) {
            const found = await base.tokens.find(hash);
            if (!found) return null;
            const [grant] = await base.grants.list({
              userId: found.token.userId,
              clientId: found.token.clientId,
            });
            return { ...found, grant: grant ?? null };
          },
        },
      });
    },
  },
  {
    bug: 'tokens.save drops rotatedAt',
    make() {
      const base = memoryStorage();
      return patch(base, { tokens: { save: (token) => base.tokens.save({ ...token, rotatedAt: null }) } });
    },
  },
  {
    bug: 'tokens.save stores expiresAt null as 0',
    make() {
      const base = memoryStorage();
      return patch(base, {
        tokens: { save: (token) => base.tokens.save({ ...token, expiresAt: token.expiresAt ?? 0 }) },
      });
    },
  },
  {
    bug: 'tokens.save keeps the first token of a hash (no replace)',
    make() {
      const base = memoryStorage();
      return patch(base, {
        tokens: {
          async save(token) {
            if (!(await base.tokens.find(token.tokenHash))) await base.tokens.save(token);
          },
        },
      });
    },
  },
  {
    bug: 'tokens share their scopes array with the caller (stored by reference)',
    make() {
      const base = memoryStorage();
      const held = new Map<string, TokenRecord>();
      return patch(base, {
        tokens: {
          async save(token) {
            held.set(token.tokenHash, token);
            await base.tokens.save(token);
          },
          async find(hash) {
            const found = await base.tokens.find(hash);
            const token = held.get(hash);
            return found && token ? { ...found, token } : found;
          },
        },
      });
    },
  },
  {
    bug: 'ephemeral.replace reads, then writes (not atomic): racing exchanges of one code both win',
    make() {
      const base = memoryStorage();
      return patch(base, {
        ephemeral: {
          async replace(key, expected, value, expiresAt, now) {
            if ((await base.ephemeral.get(key, now)) !== expected) return false;
            await new Promise((resolve) => setImmediate(resolve));
            await base.ephemeral.set(key, value, expiresAt, now);
            return true;
          },
        },
      });
    },
  },
  {
    bug: 'tokens.saveAll saves only the first token',
    make() {
      const base = memoryStorage();
      return patch(base, {
        tokens: { saveAll: (tokens) => base.tokens.saveAll(tokens.slice(0, 1)) },
      });
    },
  },
  {
    bug: 'ephemeral.add of a rotation marker (`rotated:…`) always resolves true',
    make() {
      const base = memoryStorage();
      return patch(base, {
        ephemeral: {
          async add(key, value, expiresAt, now) {
            const added = await base.ephemeral.add(key, value, expiresAt, now);
            return key.startsWith('rotated:') || added;
          },
        },
      });
    },
  },
  {
    bug: 'ephemeral.replace takes the value and leaves nothing in its place (no used-code marker)',
    make() {
      const base = memoryStorage();
      return patch(base, {
        ephemeral: {
          async replace(key, expected, value, expiresAt, now) {
            if ((await base.ephemeral.get(key, now)) !== expected) return false;
            return (await base.ephemeral.take(key, now)) !== null;
          },
        },
      });
    },
  },
  {
    bug: 'prune deletes refresh tokens without expiry (null read as 0)',
    make() {
      const base = memoryStorage();
      const pruned = new Set<string>();
      const saved = new Map<string, TokenRecord>();
      return patch(base, {
        tokens: {
          async save(token) {
            saved.set(token.tokenHash, token);
            await base.tokens.save(token);
          },
          async saveAll(tokens) {
            for (const token of tokens) saved.set(token.tokenHash, token);
            await base.tokens.saveAll(tokens);
          },
          find: async (hash) => (pruned.has(hash) ? null : base.tokens.find(hash)),
        },
        prune: async (now: number, options?: Parameters<MemoryStorage['prune']>[1]) => {
          const result = await base.prune(now, options);
          for (const token of saved.values()) {
            if (token.expiresAt === null && !pruned.has(token.tokenHash)) {
              pruned.add(token.tokenHash);
              result.tokens++;
            }
          }
          return result;
        },
      });
    },
  },
  {
    bug: 'the reader (Storage.reader) reads ephemeral keys without their expiry: an expired code still answers',
    make() {
      const storage = patch(memoryStorage(), {});
      const { ephemeral, clients, tokens, grants } = storage;
      storage.reader = {
        stores: { ephemeral, clients, tokens, grants },
        async read(request) {
          return {
            client: request.client === undefined ? null : await clients.find(request.client),
            ephemeral: Object.fromEntries(
              await Promise.all(
                (request.ephemeral ?? []).map(async (key) => [key, await ephemeral.get(key, 0)] as const),
              ),
            ),
            token: request.token === undefined ? null : await tokens.find(request.token),
            grant: null,
          };
        },
      };
      return storage;
    },
  },
  {
    bug: "the reader's grant of a user and client matches the user alone: consent to one client stands for all",
    make() {
      const storage = patch(memoryStorage(), {});
      const { ephemeral, clients, tokens, grants } = storage;
      const plain = { ...storage };
      storage.reader = {
        stores: { ephemeral, clients, tokens, grants },
        async read(request, now) {
          // Everything else as the library reads it without a reader.
          const rows = await readRows(plain, { ...request, grant: undefined }, now);
          if (request.grant === undefined) return rows;
          const [grant] = await grants.list({ userId: request.grant.userId });
          return { ...rows, grant: grant ?? null };
        },
      };
      return storage;
    },
  },
  {
    bug: 'prune keeps expired tokens and old revoked grants (only the ephemeral store is pruned)',
    make() {
      const base = memoryStorage();
      return patch(base, {
        prune: async (now: number) => ({ ephemeral: await base.ephemeral.prune(now), tokens: 0, grants: 0 }),
      });
    },
  },
];

/** One kit test as the collecting API ran it. */
interface Result {
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  error?: string;
}

interface Block {
  name: string;
  skipped: boolean;
  tests: Array<{ name: string; fn: () => Promise<void> }>;
  blocks: Block[];
  before: Array<() => Promise<void>>;
  after: Array<() => Promise<void>>;
  order: Array<{ kind: 'test' | 'block'; index: number }>;
}

const TEST_TIMEOUT = 30_000;

/** One seed for every run's races, so that the table below is the same from run to run. */
const RACE_SEED = 20261125;

/**
 * Runs the kit through a test API of our own that records each test's outcome instead of
 * reporting it: a describe tree built at registration, then run in order with its hooks.
 */
async function runKit(
  name: string,
  createStorage: () => Storage,
): Promise<{ results: Result[]; stats: ConformanceStats }> {
  const newBlock = (blockName: string, skipped: boolean): Block => ({
    name: blockName,
    skipped,
    tests: [],
    blocks: [],
    before: [],
    after: [],
    order: [],
  });
  const root = newBlock('', false);
  let current = root;
  const register = (skipped: boolean) => (blockName: string, fn: () => void) => {
    const block = newBlock(blockName, skipped || current.skipped);
    current.order.push({ kind: 'block', index: current.blocks.push(block) - 1 });
    const parent = current;
    current = block;
    fn();
    current = parent;
  };
  const api: ConformanceTestApi = {
    describe: Object.assign(register(false), { skip: register(true) }),
    it: (testName, fn) =>
      void current.order.push({ kind: 'test', index: current.tests.push({ name: testName, fn }) - 1 }),
    beforeAll: (fn) => void current.before.push(fn),
    afterAll: (fn) => void current.after.push(fn),
  };
  const stats = describeStorageConformance(api, { name, createStorage, races: { seed: RACE_SEED } });
  const results: Result[] = [];
  const timeout = (testName: string) =>
    sleep(TEST_TIMEOUT, undefined, { ref: false }).then(() => {
      throw new Error(`${testName}: timed out after ${TEST_TIMEOUT} ms`);
    });
  async function run(block: Block, path: string[]): Promise<void> {
    if (!block.skipped) for (const hook of block.before) await hook();
    for (const entry of block.order) {
      if (entry.kind === 'block') {
        const child = block.blocks[entry.index]!;
        await run(child, [...path, child.name]);
        continue;
      }
      const test = block.tests[entry.index]!;
      const testName = [...path, test.name].slice(1).join(' > ');
      if (block.skipped) {
        results.push({ name: testName, status: 'skipped' });
        continue;
      }
      try {
        await Promise.race([test.fn(), timeout(testName)]);
        results.push({ name: testName, status: 'passed' });
      } catch (error) {
        results.push({
          name: testName,
          status: 'failed',
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
    if (!block.skipped) for (const hook of block.after) await hook();
  }
  await run(root, []);
  return { results, stats };
}

/** Runs `jobs` with at most `limit` at once, keeping their order. */
async function pool<T>(limit: number, jobs: Array<() => Promise<T>>): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      out[index] = await jobs[index]!();
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return out;
}

/** A kit test's name without the long titles of its top-level group. */
function short(name: string): string {
  return name
    .replace(/^races: [^>]+> /, 'races > ')
    .replace(/^faults: [^>]+> /, 'faults > ')
    .replace(/^library rules over the adapter: /, 'rules: ');
}

/** Which part of the kit a test belongs to, by its top-level group. */
function groupOf(name: string): 'contract' | 'rules' | 'faults' | 'races' {
  if (name.startsWith('library rules')) return 'rules';
  if (name.startsWith('faults')) return 'faults';
  if (name.startsWith('races')) return 'races';
  return 'contract';
}

const failedNames = (results: readonly Result[]) =>
  results.filter((r) => r.status === 'failed').map((r) => r.name);

describe('the conformance kit catches hand-written adapter bugs', () => {
  let clean: { results: Result[]; stats: ConformanceStats };
  let caught: Array<{ bug: string; failed: string[] }>;

  beforeAll(async () => {
    const log = console.log;
    console.log = () => undefined; // the kit's "races: N interleavings" line, once per run
    try {
      clean = await runKit('memory (unmodified)', memoryStorage);
      // Mutants run a few at a time: the kit's expiry tests wait in real time, and a busy event
      // loop must not make them late.
      caught = await pool(
        8,
        mutants.map((mutant) => async () => ({
          bug: mutant.bug,
          failed: failedNames((await runKit(mutant.bug, () => mutant.make())).results),
        })),
      );
    } finally {
      console.log = log;
    }
    const table = [
      '| Bug (a wrapper around `memoryStorage()`) | Tests failed | First failing test, per part of the kit (+ more of that part) |',
      '| --- | --- | --- |',
      ...caught.map(({ bug, failed }) => {
        const cell = (text: string) => text.replaceAll('|', '\\|');
        const parts = (['contract', 'rules', 'faults', 'races'] as const).flatMap((group) => {
          const names = failed.filter((name) => groupOf(name) === group);
          if (names.length === 0) return [];
          const more = names.length > 1 ? ` (+${names.length - 1})` : '';
          return [`\`${cell(short(names[0]!))}\`${more}`];
        });
        return `| ${cell(bug)} | ${failed.length} | ${parts.join('<br>')} |`;
      }),
    ].join('\n');
    console.log(`\n${mutants.length} mutants, the kit's ${clean.results.length} tests each:\n\n${table}\n`);
  }, 600_000);

  it('the unmodified memory adapter passes every test of the kit', () => {
    const failed = clean.results.filter((r) => r.status === 'failed');
    expect(failed.map((r) => `${r.name}: ${r.error}`)).toEqual([]);
    expect(clean.results.filter((r) => r.status === 'passed').length).toBeGreaterThan(60);
    expect(clean.stats.raceRuns).toBeGreaterThan(0);
  });

  it(`has at least 20 distinct mutants (${mutants.length})`, () => {
    expect(new Set(mutants.map((m) => m.bug)).size).toBe(mutants.length);
    expect(mutants.length).toBeGreaterThanOrEqual(20);
  });

  for (const [index, mutant] of mutants.entries()) {
    it(`catches: ${mutant.bug}`, () => {
      const { failed } = caught[index]!;
      expect(failed.length, `no kit test failed for the bug "${mutant.bug}"`).toBeGreaterThan(0);
    });
  }
});
