/**
 * A storage adapter on Redis (7.0 or later), written the way you would write one for your own
 * database: each method keeps the guarantee stated next to it in the `Storage` types, and
 * `test/storage.conformance.redis.test.ts` checks them all with the conformance kit.
 *
 * Four ways to make an operation atomic in Redis appear here:
 * - **`SET ... NX`** (set only if absent) is a single-use switch: `nonces.use`, `codes.consume`
 *   and the first login in `users.findOrCreate`.
 * - **`MULTI`** runs several commands as one: `consents.grant` adds scopes and reads the result.
 * - **Lua scripts** (`EVAL`) run a check and a write with nothing in between: creating a client
 *   only if its id is free, saving a token only if its grant is not revoked, rotating a refresh
 *   token only if it was not rotated before.
 * - **Compare-and-set** for a read-modify-write: `clients.update` writes only if the client is
 *   still what it read, and tries again otherwise.
 *
 * Key expiry does the cleaning: codes, access tokens, expiring refresh tokens, nonces, sessions
 * and revoked-grant markers are written with `PXAT` (expire at a given time), so Redis deletes them
 * when they expire and the adapter needs no `prune`. Validity is still decided by the `now` the
 * library passes in; expiry only removes rows that nobody needs any more.
 *
 * @example
 * import { createClient } from 'redis';
 *
 * const redis = createClient({ url: process.env.REDIS_URL });
 * await redis.connect();
 * const server = createAuthorizationServer({ storage: redisStorage(redis, { keyPrefix: 'oauth' }), ... });
 */
import type { RedisClientType } from 'redis';
// In your app: `from 'openid-oauth-bridge'`.
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ClientRecord,
  ClientStore,
  ConsentRecord,
  ConsentStore,
  RefreshTokenRecord,
  Storage,
  TokenStore,
  UserRecord,
} from '../src/index.js';

export interface RedisStorageOptions {
  /** Starts every key, so that several apps (or test runs) can share one Redis. Default `'oauth'`. */
  keyPrefix?: string;
  /** How long a revoked grant is remembered, to refuse tokens saved under it late. Default one day. */
  revokedGrantRetentionMs?: number;
}

/**
 * A `Storage` on Redis. Implements every domain, sessions included, but not `prune`: Redis deletes
 * expired keys itself. Calls `EVAL` with the scripts' text each time; if you create the client
 * yourself, `defineScript` from `redis` registers them once and calls them by SHA1.
 */
export function redisStorage(redis: RedisClientType, options: RedisStorageOptions = {}): Storage {
  const prefix = options.keyPrefix ?? 'oauth';
  const db: Db = {
    redis,
    // Parts are URI-encoded so that an id containing ':' cannot make two keys collide.
    key: (kind, ...parts) => [prefix, kind, ...parts.map(encodeURIComponent)].join(':'),
  };
  return {
    clients: clientStore(db),
    users: {
      async findOrCreate(identity, newId, now) {
        // Write the user first, then claim the identity with SET NX: whoever reads the identity's
        // id finds the user already there. A racer that loses removes its unused user.
        const user: UserRecord = { id: newId, ...identity, createdAt: now };
        await redis.set(db.key('user', newId), JSON.stringify(user));
        const identityKey = db.key('identity', identity.provider, identity.identifier);
        if ((await redis.set(identityKey, newId, { condition: 'NX' })) !== null) return user;
        await redis.del(db.key('user', newId));
        const existing = parse<UserRecord>(
          await redis.get(db.key('user', (await redis.get(identityKey)) ?? '')),
        );
        if (!existing) throw new Error(`the user of ${identity.identifier} vanished`);
        return existing;
      },
      async find(id) {
        return parse<UserRecord>(await redis.get(db.key('user', id)));
      },
    },
    consents: consentStore(db),
    codes: {
      async create(code) {
        // Indexed by client (scored by expiry) so that removing the client can delete its codes.
        const codeKey = db.key('code', code.codeHash);
        await trimmedIndex(db, db.key('client-codes', code.clientId), codeKey, code.expiresAt, code.createdAt)
          .set(codeKey, JSON.stringify(code), { expiration: { type: 'PXAT', value: code.expiresAt } })
          .exec();
      },
      async consume(codeHash) {
        // The code itself never changes; its use is a separate marker set with NX, so exactly one
        // caller creates it. The marker lives as long as the code, so a replay is recognized.
        const code = parse<AuthorizationCodeRecord>(await redis.get(db.key('code', codeHash)));
        if (!code) return null;
        const first = await redis.set(db.key('code-used', codeHash), '1', {
          condition: 'NX',
          expiration: { type: 'PXAT', value: code.expiresAt },
        });
        return { status: first === null ? 'replayed' : 'consumed', code };
      },
    },
    tokens: tokenStore(db, options.revokedGrantRetentionMs ?? 24 * 60 * 60 * 1000),
    nonces: {
      async use(scope, nonce, expiresAt) {
        const first = await redis.set(db.key('nonce', scope, nonce), '1', {
          condition: 'NX',
          expiration: { type: 'PXAT', value: expiresAt },
        });
        return first !== null;
      },
    },
    sessions: {
      // The key's own expiry is the session's expiresAt: PEXPIRETIME reads it back, PEXPIREAT
      // (touch) moves it and does nothing for a missing key.
      async get(sid, now) {
        const sessionKey = db.key('session', sid);
        const [json, expiresAt] = await redis.multi().get(sessionKey).pExpireTime(sessionKey).execTyped();
        return json !== null && expiresAt > now ? json : null;
      },
      async set(sid, json, expiresAt) {
        await redis.set(db.key('session', sid), json, { expiration: { type: 'PXAT', value: expiresAt } });
      },
      async touch(sid, expiresAt) {
        await redis.pExpireAt(db.key('session', sid), expiresAt);
      },
      async destroy(sid) {
        await redis.del(db.key('session', sid));
      },
    },
  };
}

/** The client and the key builder every store shares. */
interface Db {
  redis: RedisClientType;
  key(kind: string, ...parts: string[]): string;
}

function parse<T>(json: string | null | undefined): T | null {
  return json == null ? null : (JSON.parse(json) as T);
}

/**
 * Adds `member` to a sorted-set index scored by its expiry (`null`: never), and drops the entries
 * that expired before `now`, so indexes stay small. Returns the MULTI for more commands.
 */
function trimmedIndex(db: Db, index: string, member: string, expiresAt: number | null, now: number) {
  return db.redis
    .multi()
    .zAdd(index, { score: expiresAt ?? Infinity, value: member })
    .zRemRangeByScore(index, '-inf', `(${now}`);
}

/** Deletes every key an index lists and empties the index; resolves how many keys still existed. */
async function deleteIndexed(db: Db, index: string): Promise<number> {
  const keys = await db.redis.zRange(index, 0, -1);
  if (keys.length === 0) return 0;
  const [deleted] = await db.redis.multi().del(keys).zRem(index, keys).execTyped();
  return deleted;
}

// KEYS: client, client index. ARGV: client JSON, createdAt, clientId.
const CREATE_CLIENT = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
`;

// KEYS: key. ARGV: the value read, the value to write. Writes only if nobody wrote in between.
const COMPARE_AND_SET = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`;

/** Clients: a JSON string each, and a sorted set of ids scored by `createdAt` for `list`. */
function clientStore(db: Db): ClientStore {
  const { redis, key } = db;
  return {
    async find(clientId) {
      return parse<ClientRecord>(await redis.get(key('client', clientId)));
    },
    async create(client) {
      const created = await redis.eval(CREATE_CLIENT, {
        keys: [key('client', client.clientId), key('clients')],
        arguments: [JSON.stringify(client), String(client.createdAt), client.clientId],
      });
      if (created !== 1) throw new Error(`client_id ${client.clientId} is taken`);
    },
    async list() {
      // A sorted set orders equal scores by member: by createdAt, then clientId.
      const ids = await redis.zRange(key('clients'), 0, -1);
      const clients = ids.length === 0 ? [] : await redis.mGet(ids.map((id) => key('client', id)));
      return clients.flatMap((json) => parse<ClientRecord>(json) ?? []);
    },
    async update(clientId, changes) {
      for (;;) {
        const read = await redis.get(key('client', clientId));
        if (read === null) return null;
        const updated: ClientRecord = { ...(JSON.parse(read) as ClientRecord), ...changes };
        const written = await redis.eval(COMPARE_AND_SET, {
          keys: [key('client', clientId)],
          arguments: [read, JSON.stringify(updated)],
        });
        if (written === 1) return updated;
      }
    },
    async remove(clientId) {
      // The client first: from here on its tokens are not found, whatever is left to delete.
      const removed = (await redis.del(key('client', clientId))) === 1;
      await redis.zRem(key('clients'), clientId);
      await deleteIndexed(db, key('client-tokens', clientId));
      await deleteIndexed(db, key('client-codes', clientId));
      const consents = consentStore(db);
      for (const userId of await redis.zRange(key('client-consents', clientId), 0, -1)) {
        await consents.revoke(userId, clientId);
      }
      return removed;
    },
  };
}

/**
 * Consents: one hash per user and client, with createdAt, updatedAt and a field `scope:<name>`
 * per scope, so that granting more scopes is a plain HSET (a union) with no read before it. Three
 * sorted sets scored by createdAt list them: all, per user, per client.
 */
function consentStore(db: Db): ConsentStore {
  const { redis, key } = db;
  const consentKey = (userId: string, clientId: string) => key('consent', userId, clientId);
  const pair = (userId: string, clientId: string) => JSON.stringify([userId, clientId]);

  async function pairs(filter: { userId?: string; clientId?: string }): Promise<[string, string][]> {
    const { userId, clientId } = filter;
    if (userId !== undefined) {
      const clientIds = await redis.zRange(key('user-consents', userId), 0, -1);
      return clientIds.filter((id) => clientId === undefined || id === clientId).map((id) => [userId, id]);
    }
    if (clientId !== undefined) {
      return (await redis.zRange(key('client-consents', clientId), 0, -1)).map((id) => [id, clientId]);
    }
    return (await redis.zRange(key('consents'), 0, -1)).map(
      (member) => JSON.parse(member) as [string, string],
    );
  }

  async function find(userId: string, clientId: string): Promise<ConsentRecord | null> {
    return consentOf(userId, clientId, await redis.hGetAll(consentKey(userId, clientId)));
  }

  /** The newest createdAt among the tokens of the user for the client that still exist. */
  async function lastUsedAt(userId: string, clientId: string): Promise<number | null> {
    const tokenKeys = await redis.zRange(key('owner', userId, clientId), 0, -1);
    const records = await Promise.all(tokenKeys.map((tokenKey) => redis.hGet(tokenKey, 'record')));
    const times = records.flatMap((json) => parse<AccessTokenRecord>(json)?.createdAt ?? []);
    return times.length === 0 ? null : Math.max(...times);
  }

  return {
    find,
    async grant(userId, clientId, scopes, now) {
      const fields = Object.fromEntries([
        ['updatedAt', String(now)],
        ...scopes.map((scope) => [`scope:${scope}`, '1']),
      ]);
      const first = { condition: 'NX' } as const; // an index keeps the first createdAt
      const [, , , , , stored] = await redis
        .multi()
        .hSetNX(consentKey(userId, clientId), 'createdAt', String(now))
        .hSet(consentKey(userId, clientId), fields)
        .zAdd(key('consents'), { score: now, value: pair(userId, clientId) }, first)
        .zAdd(key('user-consents', userId), { score: now, value: clientId }, first)
        .zAdd(key('client-consents', clientId), { score: now, value: userId }, first)
        .hGetAll(consentKey(userId, clientId))
        .execTyped();
      const consent = consentOf(userId, clientId, stored);
      if (!consent) throw new Error('the consent vanished while it was granted');
      return consent;
    },
    async revoke(userId, clientId) {
      const [deleted] = await redis
        .multi()
        .del(consentKey(userId, clientId))
        .zRem(key('consents'), pair(userId, clientId))
        .zRem(key('user-consents', userId), clientId)
        .zRem(key('client-consents', clientId), userId)
        .execTyped();
      return deleted === 1;
    },
    async list(filter = {}) {
      const summaries = [];
      for (const [userId, clientId] of await pairs(filter)) {
        const consent = await find(userId, clientId);
        if (consent) summaries.push({ ...consent, lastUsedAt: await lastUsedAt(userId, clientId) });
      }
      return summaries;
    },
  };
}

/** A consent from its hash, or `null` for an empty (absent) hash. */
function consentOf(userId: string, clientId: string, hash: Record<string, string>): ConsentRecord | null {
  if (hash.createdAt === undefined) return null;
  return {
    userId,
    clientId,
    scopes: Object.keys(hash)
      .filter((field) => field.startsWith('scope:'))
      .map((field) => field.slice('scope:'.length)),
    createdAt: Number(hash.createdAt),
    updatedAt: Number(hash.updatedAt),
  };
}

/*
 * Saves a token (a hash with its JSON in the field `record`) unless its grant is revoked, and
 * indexes it by grant, by user and client, and by client, in sorted sets scored by expiry.
 * Entries that expired before this token was created are dropped, so the indexes stay small.
 *   KEYS: token, revoked-grant marker, then the three indexes
 *   ARGV: record JSON, expiresAt ('' for never), createdAt
 */
const SAVE_TOKEN = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[1])
if ARGV[2] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
for i = 3, 5 do
  redis.call('ZADD', KEYS[i], ARGV[2] == '' and '+inf' or ARGV[2], KEYS[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', '(' .. ARGV[3])
end
return 1
`;

// Marks a refresh token rotated, once: HSETNX sets the field only if it is absent.
// KEYS: token. ARGV: now.
const MARK_ROTATED = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
if redis.call('HSETNX', KEYS[1], 'rotatedAt', ARGV[1]) == 0 then return 'reused' end
return 'rotated'
`;

/** Access and refresh tokens: a hash each, found only while their client exists and is enabled. */
function tokenStore(db: Db, retention: number): TokenStore {
  const { redis, key } = db;

  async function save(token: AccessTokenRecord | RefreshTokenRecord, tokenKey: string): Promise<void> {
    await redis.eval(SAVE_TOKEN, {
      keys: [
        tokenKey,
        key('revoked', token.grantId),
        key('grant', token.grantId),
        key('owner', token.userId, token.clientId),
        key('client-tokens', token.clientId),
      ],
      arguments: [
        JSON.stringify(token),
        token.expiresAt === null ? '' : String(token.expiresAt),
        String(token.createdAt),
      ],
    });
  }

  /** The token, if its client exists and is enabled. */
  async function ofActiveClient<T extends { clientId: string }>(token: T | null): Promise<T | null> {
    if (!token) return null;
    const client = parse<ClientRecord>(await redis.get(key('client', token.clientId)));
    return client && !client.disabled ? token : null;
  }

  return {
    async saveAccessToken(token) {
      await save(token, key('access', token.tokenHash));
    },
    async findAccessToken(tokenHash) {
      return ofActiveClient(parse<AccessTokenRecord>(await redis.hGet(key('access', tokenHash), 'record')));
    },
    async saveRefreshToken(token) {
      await save(token, key('refresh', token.tokenHash));
    },
    async findRefreshToken(tokenHash) {
      const [record, rotatedAt] = await redis.hmGet(key('refresh', tokenHash), ['record', 'rotatedAt']);
      const token = parse<RefreshTokenRecord>(record);
      return ofActiveClient(token && { ...token, rotatedAt: rotatedAt == null ? null : Number(rotatedAt) });
    },
    async rotateRefreshToken(oldHash, next, now) {
      const outcome = await redis.eval(MARK_ROTATED, {
        keys: [key('refresh', oldHash)],
        arguments: [String(now)],
      });
      if (outcome !== 'rotated') return outcome === 'reused' ? 'reused' : 'missing';
      // If the grant is revoked in between, SAVE_TOKEN refuses `next`.
      await save(next, key('refresh', next.tokenHash));
      return 'rotated';
    },
    async revokeGrant(grantId, now) {
      // The marker first: from now on SAVE_TOKEN refuses this grant, so the index can only shrink.
      await redis.set(key('revoked', grantId), String(now), {
        expiration: { type: 'PXAT', value: now + retention },
      });
      return deleteIndexed(db, key('grant', grantId));
    },
    async revokeForUserAndClient(userId, clientId) {
      return deleteIndexed(db, key('owner', userId, clientId));
    },
  };
}
