/**
 * Storage adapter contract, split by how long what it holds lives.
 *
 * - **Ephemeral** state (authorization codes, OpenID nonces, login sessions, rate-limit counters,
 *   revocation and rotation markers) goes through one generic key-value store with expiry,
 *   {@link EphemeralStore}. Keys are chosen by the library.
 * - **Durable** state (clients, users, grants, access and refresh tokens) goes through typed
 *   stores.
 *
 * A custom adapter implements 14 required methods: `ephemeral` (7), `clients.find`,
 * `users.findOrCreate`, `grants.list`, `grants.save`, `tokens.save`, `tokens.saveAll` and
 * `tokens.find`; the
 * optional ones serve the operator, pruning, and reading several rows at once (`reader`). The rules
 * that span stores (a replayed code revokes its grant, a revoked grant accepts no new token,
 * rotation reuse revokes the grant, a code is consumed only after its tokens are saved) live in
 * the library, once; an adapter only keeps the guarantee written next to each method.
 *
 * Times are epoch milliseconds from the server's single clock (`options.clock`), passed in by the
 * library; an adapter never reads its own clock to decide validity (a store with native expiry,
 * such as Redis, turns `expiresAt - now` into a time to live).
 *
 * Secrets never reach an adapter in plaintext: tokens, codes and client secrets arrive as
 * SHA-256 hashes (base64url), and lookups are by hash.
 */

import type { KeyStore } from './key-store.js';

import type { PruneOptions, PruneResult } from './prune-types.js';
import type { ClientRecord, ClientStore } from './client-types.js';
import type { UsageStore } from './usage-types.js';

export type { KeyStore, SigningKeyRecord } from './key-store.js';
export type { PruneOptions, PruneResult } from './prune-types.js';
export type {
  ClientChanges,
  ClientGrantType,
  ClientListFilter,
  ClientRecord,
  ClientStore,
} from './client-types.js';
export type { LastUse, UsageBatch, UsageCount, UsageKind, UsageStore } from './usage-types.js';

/** A counter of {@link EphemeralStore.increment}. */
export interface EphemeralCounter {
  /** The count after this increment, the first one of a window being `1`. */
  count: number;
  /** When the counter expires and the next increment starts again from `1` (epoch ms). */
  expiresAt: number;
}

/**
 * Short-lived state: a key-value store with expiry. Keys are compared exactly (case and trailing
 * spaces count: beware of a SQL collation that ignores them); values are strings (the library
 * stores JSON) and round-trip byte for byte. An entry whose `expiresAt` is at or before `now` is
 * absent for every method; the library never writes one that expires at or before `now`. Every
 * method is atomic on its key and visible to every instance sharing the store once it resolves.
 */
export interface EphemeralStore {
  /** Required. The value of `key`, or `null` if absent or expired at `now`. */
  get(key: string, now: number): Promise<string | null>;
  /** Required. Stores `value` under `key` until `expiresAt`, replacing any value and expiry. */
  set(key: string, value: string, expiresAt: number, now: number): Promise<void>;
  /**
   * Required. Stores `value` under `key` until `expiresAt` only if `key` is absent (or expired).
   * Resolves `true` for exactly one of any number of racing callers, `false` for the others and
   * for every later caller while the entry lives.
   */
  add(key: string, value: string, expiresAt: number, now: number): Promise<boolean>;
  /**
   * Required. Removes `key` and resolves its value. Exactly one of any number of racing callers
   * receives the value; the others, and every later caller, receive `null`.
   */
  take(key: string, now: number): Promise<string | null>;
  /**
   * Required. Replaces the live value of `key` with `value` until `expiresAt`, only if it is
   * exactly `expected` (compare and set); resolves whether it did. However many callers race with
   * the same `expected`, exactly one resolves `true`; an absent or expired key is never written.
   * The code exchange's commit point: it takes the code and leaves its used marker under the same
   * key in one atomic step, so no moment exists in which the code is gone and the marker absent.
   */
  replace(key: string, expected: string, value: string, expiresAt: number, now: number): Promise<boolean>;
  /**
   * Required. Adds one to the integer counter of `key` and resolves it. An absent or expired
   * counter starts at `1`, expiring at `expiresAt`; a live one keeps its expiry. However many
   * callers race, each sees a distinct count. The counter's value, as `get` reads it, is the count
   * in decimal (`'3'`).
   */
  increment(key: string, expiresAt: number, now: number): Promise<EphemeralCounter>;
  /** Required. Deletes `key`; no error if absent. */
  delete(key: string): Promise<void>;
  /** Optional. Deletes entries expired at `now`; resolves how many. For stores without native expiry. */
  prune?(now: number): Promise<number>;
}

/** An end user, created at their first login at a provider ({@link UserStore.findOrCreate}). */
export interface UserRecord {
  /** Library-assigned stable id. */
  id: string;
  /** The verified external identifier (the OpenID claimed identifier). */
  identifier: string;
  /**
   * The identifier's namespace: `openid` for a verified OpenID claimed identifier (a URL, one
   * person whichever configured provider asserted it, so renaming a provider changes no user), or
   * the provider a custom login strategy names for its own identifiers.
   */
  provider: string;
  createdAt: number;
}

/** End users, created at their first login. */
export interface UserStore {
  /**
   * Required. The user with this `identifier` in this `provider` namespace, created with id
   * `newId` if absent. Concurrent calls for the same identity resolve the same user.
   */
  findOrCreate(
    identity: { identifier: string; provider: string },
    newId: string,
    now: number,
  ): Promise<UserRecord>;
  /** Optional (the CLI shows identifiers with it). The user with this id, or `null`. */
  find?(id: string): Promise<UserRecord | null>;
  /**
   * Optional, with {@link UserStore.findClaims} (OpenID Connect's UserInfo serves them, and
   * `requireBearer` and introspection read the `groups`). Replaces the claims of `subject` (the
   * id tokens carry: a user's id, or the host's account id) with those of its latest login
   * (`steam_id`, `name`, `picture`, `groups`, ...), written as given.
   */
  saveClaims?(subject: string, claims: AccountClaims): Promise<void>;
  /** Optional, with {@link UserStore.saveClaims}. The claims last saved for `subject`, or `null`. */
  findClaims?(subject: string): Promise<AccountClaims | null>;
}

/**
 * An account's claims from its latest login: strings (`steam_id`, `name`, `picture`), and lists of
 * strings (`groups`, the user's teams). Stored as they are (JSON, in the SQL adapter).
 */
export type AccountClaims = Record<string, string | string[]>;

/**
 * A user's trust in an application: the consent ("asked once per application") and the grant
 * every code and token of that user for that client belongs to. There is at most one grant per
 * user and client; revoking it marks it (`revokedAt`) and the next authorization starts a new one
 * with a new `grantId`.
 *
 * A `client_credentials` client's tokens belong to a grant of its own, started at its first token
 * and ended as any other (revoked, or deleted with the client): its `userId` is the client's own
 * subject, `client:<client_id>`, which no member is.
 */
export interface GrantRecord {
  /** Unique, never reused: tokens and codes name their grant by it. */
  grantId: string;
  /** The user; for a `client_credentials` client's own grant, `client:<client_id>`. */
  userId: string;
  clientId: string;
  /** Scopes the user trusted the client with. */
  scopes: string[];
  /**
   * Optional; absent or empty: none named. The resources (RFC 8707) the user trusted the client
   * with, when the server declares resources.
   */
  resources?: string[];
  createdAt: number;
  updatedAt: number;
  /** When it was revoked; `null` while it stands. */
  revokedAt: number | null;
}

/** Grants (consents), one per user and client. */
export interface GrantStore {
  /**
   * Required. The grants matching every field of `filter` (all of them for `{}`), ordered by
   * `createdAt` then `clientId`. Revoked grants are included; the library tells them apart.
   */
  list(filter: { userId?: string; clientId?: string }): Promise<GrantRecord[]>;
  /**
   * Required. Inserts the grant, or replaces the one of the same user and client (whatever its
   * `grantId`), writing every field as given. Visible to every instance once it resolves.
   */
  save(grant: GrantRecord): Promise<void>;
}

/** An access or a refresh token. */
export interface TokenRecord {
  tokenHash: string;
  type: 'access_token' | 'refresh_token';
  /** The grant it was issued under. */
  grantId: string;
  clientId: string;
  userId: string;
  scopes: string[];
  /**
   * Optional; absent or empty: bound to no resource. The resources (RFC 8707) the token is for:
   * an access token's audience, where it works; a refresh token's, those its access tokens may
   * be for.
   */
  resources?: string[];
  createdAt: number;
  /** `null`: valid until revoked (refresh tokens, by default). */
  expiresAt: number | null;
  /**
   * How it was issued: `authorization_code`, `device_code`, `refresh_token`, `implicit` (access
   * tokens in a redirect fragment) or `client_credentials` (a client's own access token: its
   * subject is the client, and `userId` is the client's own subject, `client:<client_id>`).
   * Refresh tokens: `authorization_code`, `device_code` or `refresh_token` (rotation).
   */
  origin: 'authorization_code' | 'device_code' | 'refresh_token' | 'implicit' | 'client_credentials';
  /** Refresh tokens: when rotation replaced it; presented again, it reveals a leak. */
  rotatedAt: number | null;
}

/** A token as {@link TokenStore.find} reads it: with its grant and client, in one read. */
export interface FoundTokenRecord {
  token: TokenRecord;
  /** The grant whose `grantId` equals `token.grantId`, or `null` if there is none. */
  grant: GrantRecord | null;
  /** The client whose `clientId` equals `token.clientId`, or `null` if there is none. */
  client: ClientRecord | null;
}

/** Access and refresh tokens. */
export interface TokenStore {
  /** Required. Inserts the token, or replaces the one with the same hash. */
  save(token: TokenRecord): Promise<void>;
  /**
   * Required. Saves several tokens (a code's access and refresh token) as {@link TokenStore.save}
   * saves each, in one write: all of them or none (one statement, in SQL). The library issues a
   * code's or a device's tokens with one call of it, before the commit point.
   */
  saveAll(tokens: readonly TokenRecord[]): Promise<void>;
  /**
   * Required. The token with this hash, with its grant and its client as they are now (one
   * query with joins, in SQL), or `null`. Returned whatever its state (expired, rotated, its grant
   * revoked): the library decides.
   */
  find(tokenHash: string): Promise<FoundTokenRecord | null>;
}

/** Everything the library stores. */
export interface Storage {
  ephemeral: EphemeralStore;
  clients: ClientStore;
  users: UserStore;
  grants: GrantStore;
  tokens: TokenStore;
  /** Optional: required with OpenID Connect on and keys kept by the library. */
  keys?: KeyStore;
  /**
   * Optional: per-app usage (day counts and last use), written in batches by the library's
   * recorder, never on a request; without it nothing is counted.
   */
  usage?: UsageStore;
  /**
   * Optional. Deletes what is no longer needed at `now`: expired ephemeral entries, tokens that
   * can no longer work (expired, of a revoked or replaced grant, of a removed client), grants
   * revoked longer ago than the retention, and self-registered clients never used whose
   * `unusedExpiresAt` is at or before `now`, with their grants, and (with `usage`) usage older
   * than its retention. Safe to run from several instances at once.
   */
  prune?(now: number, options?: PruneOptions): Promise<PruneResult>;
  /**
   * Optional, for reads only: several reads of this storage's stores in one round trip. The
   * endpoints that authenticate a client (token, revocation, introspection) read what they need
   * in one load step at the top of their table: the client, its rate-limit counters and the code
   * or token the request names. Without a reader the library makes those reads one by one, on
   * the same path; with one, a database answers them in one statement (the SQL adapter has one).
   *
   * `read` answers exactly as the methods of `stores` would, each read as of `now`: `client` as
   * `clients.find`, each key of `ephemeral` as `ephemeral.get` (keyed by the key), `token` as
   * `tokens.find`; a read not asked for is `null` (no key for `ephemeral`). `grantOf` names one
   * of the `ephemeral` keys whose value is the library's JSON naming a grant (an authorization
   * code: its `grantId`, `userId` and `clientId`): `grant` is then the grant `grants.list` has for
   * that user and client when its `grantId` is the one named, else `null` (the entry absent too).
   * `grant`, instead, names a user and client: `grant` is then their grant as `grants.list` reads
   * it (revoked or not), or `null`. The library asks for one of the two at most. The library uses the
   * reader only while `stores` are this storage's own: compose a durable adapter and another
   * ephemeral store with `composeStorage`, which keeps the reader only then; a storage spread or
   * wrapped by hand is read one by one.
   */
  reader?: {
    /** The stores `read` reads. */
    readonly stores: Pick<Storage, 'ephemeral' | 'clients' | 'tokens' | 'grants'>;
    read(
      request: {
        client?: string;
        ephemeral?: readonly string[];
        token?: string;
        grantOf?: string;
        grant?: { userId: string; clientId: string };
      },
      now: number,
    ): Promise<{
      client: ClientRecord | null;
      ephemeral: Readonly<Record<string, string | null>>;
      token: FoundTokenRecord | null;
      grant: GrantRecord | null;
    }>;
  };
}

/** What {@link Storage.reader} reads. */
export type StorageRead = Parameters<NonNullable<Storage['reader']>['read']>[0];
/** What {@link Storage.reader} resolves. */
export type StorageReadResult = Awaited<ReturnType<NonNullable<Storage['reader']>['read']>>;
