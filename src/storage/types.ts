/**
 * Storage adapter contract, split by how long what it holds lives.
 *
 * - **Ephemeral** state (authorization codes, OpenID nonces, login sessions, rate-limit counters,
 *   revocation and rotation markers) goes through one generic key-value store with expiry,
 *   {@link EphemeralStore}. Keys are chosen by the library.
 * - **Durable** state (clients, users, grants, access and refresh tokens) goes through typed
 *   stores.
 *
 * A custom adapter implements 12 required methods: `ephemeral` (6), `clients.find`,
 * `users.findOrCreate`, `grants.list`, `grants.save`, `tokens.save` and `tokens.find`; the
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

export type { KeyStore, SigningKeyRecord } from './key-store.js';
export type { PruneOptions, PruneResult } from './prune-types.js';

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

/**
 * The grant a client is registered for: `authorization_code` (and refresh), `device_code` (RFC
 * 8628, and refresh) or `implicit`.
 */
export type ClientGrantType = 'authorization_code' | 'implicit' | 'device_code';

/**
 * A registered client application, as the {@link ClientStore} keeps it. Registered out of band
 * (the CLI, `registerClient`), never through a public API.
 *
 * @see RFC 6749 section 2
 */
export interface ClientRecord {
  /** Public identifier, compared exactly (case-sensitive). */
  clientId: string;
  /** User-friendly name shown on the consent page. */
  applicationName: string;
  /**
   * The registered redirect URI (see the redirect URI rule in docs/reference.md); `''` for a
   * `device_code` client, which has none.
   */
  redirectUri: string;
  /** The grant the client uses. */
  grantType: ClientGrantType;
  /**
   * SHA-256 of the client secret; `null` for a public client (RFC 6749 2.1: implicit clients, and
   * code or device clients registered as public), which names itself with `client_id` alone.
   */
  secretHash: string | null;
  /** Scopes the client may request. */
  scopes: string[];
  /**
   * Scopes granted when a request names none; absent or `null`: all of `scopes`. Always a
   * subset of `scopes`.
   */
  defaultScopes?: string[] | null;
  /** Ways to reach the client's developers (e-mail addresses, say), for the operator. */
  contacts?: string[];
  /**
   * Where OpenID Connect RP-initiated logout may send the browser after signing out
   * (`post_logout_redirect_uri`, compared exactly); absent or empty: nowhere.
   */
  postLogoutRedirectUris?: string[];
  /**
   * A disabled client can neither authorize nor authenticate at the token endpoint, and its
   * tokens do not work while it stays disabled (they work again if it is enabled).
   */
  disabled: boolean;
  /**
   * Optional; absent means `false`. When `true`, every authorization request of this client must
   * carry a PKCE `code_challenge` (RFC 7636 4.4.1), and no code issued without one is exchanged.
   * A public code client (`secretHash` `null`) must whatever this says.
   */
  requirePkce?: boolean;
  /**
   * Optional; absent or empty: anyone may use the client. Otherwise only members of at least one
   * of these teams (as the provider verified them at the person's login: Launchpad's teams
   * extension) are authorized; anyone else gets `access_denied`.
   */
  allowedTeams?: string[];
  /**
   * Optional; absent or empty: every resource the server declares (its `resources` option). The
   * resources (RFC 8707) this client may ask tokens for; a request naming another is
   * `invalid_target`.
   */
  resources?: string[];
  /**
   * Optional; absent means `'operator'`. How the client came to be: registered by an operator
   * (the CLI, `registerClient`), made from a client ID metadata document the server fetched
   * (`'document'`), or registered by itself through dynamic client registration (`'dynamic'`).
   * The consent page tells the user when the operator did not register it.
   */
  registeredVia?: 'operator' | 'document' | 'dynamic';
  createdAt: number;
  /**
   * Optional; absent or `null` for a client in use or registered by the operator. A client that
   * registered itself (dynamic registration, RFC 7591) and has had no token issued yet: `prune`
   * removes it, with its grants, at this time (epoch ms). The library clears it (`null`, through
   * `clients.update`) when the client's first token is issued: one write, at its first use.
   */
  unusedExpiresAt?: number | null;
}

/** What an operator may change on a registered client. */
export type ClientChanges = Partial<
  Pick<
    ClientRecord,
    | 'applicationName'
    | 'redirectUri'
    | 'grantType'
    | 'secretHash'
    | 'scopes'
    | 'defaultScopes'
    | 'contacts'
    | 'postLogoutRedirectUris'
    | 'disabled'
    | 'requirePkce'
    | 'allowedTeams'
    | 'resources'
    | 'registeredVia'
    | 'unusedExpiresAt'
  >
>;

/**
 * Registered client applications. Registration is out of band: only `find` is on the request
 * path; the operator methods serve the CLI and `registerClient`, and an adapter whose clients are
 * managed elsewhere may leave them out.
 */
export interface ClientStore {
  /** Required. The client whose id equals `clientId` exactly, or `null`. */
  find(clientId: string): Promise<ClientRecord | null>;
  /** Operator (optional). Inserts a client. Rejects if the `clientId` is taken. */
  create?(client: ClientRecord): Promise<void>;
  /** Operator (optional). Every client, ordered by `createdAt` then `clientId`. */
  list?(): Promise<ClientRecord[]>;
  /**
   * Operator (optional). Applies `changes` (a key set to `undefined` is no change); resolves the
   * updated client, or `null` if absent.
   */
  update?(clientId: string, changes: ClientChanges): Promise<ClientRecord | null>;
  /**
   * Operator (optional). Deletes the client and its grants; resolves `true` if the client
   * existed. Its tokens stop working as it returns, because a token is only accepted with its
   * client and its grant (see {@link TokenStore.find}), and a client registered again under the
   * same id starts with no grant. The adapter may delete the tokens too, or leave them to prune.
   */
  remove?(clientId: string): Promise<boolean>;
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
 */
export interface GrantRecord {
  /** Unique, never reused: tokens and codes name their grant by it. */
  grantId: string;
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
   * How it was issued: `authorization_code`, `device_code`, `refresh_token` or `implicit` (access
   * tokens in a redirect fragment). Refresh tokens: `authorization_code`, `device_code` or
   * `refresh_token` (rotation).
   */
  origin: 'authorization_code' | 'device_code' | 'refresh_token' | 'implicit';
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
   * Optional. Deletes what is no longer needed at `now`: expired ephemeral entries, tokens that
   * can no longer work (expired, of a revoked or replaced grant, of a removed client), grants
   * revoked longer ago than the retention, and self-registered clients never used whose
   * `unusedExpiresAt` is at or before `now`, with their grants. Safe to run from several
   * instances at once.
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
   * `tokens.find`; a read not asked for is `null` (no key for `ephemeral`). The library uses the
   * reader only while `stores` are this storage's own: compose a durable adapter and another
   * ephemeral store with `composeStorage`, which keeps the reader only then; a storage spread or
   * wrapped by hand is read one by one.
   */
  reader?: {
    /** The stores `read` reads. */
    readonly stores: Pick<Storage, 'ephemeral' | 'clients' | 'tokens'>;
    read(
      request: { client?: string; ephemeral?: readonly string[]; token?: string },
      now: number,
    ): Promise<{
      client: ClientRecord | null;
      ephemeral: Readonly<Record<string, string | null>>;
      token: FoundTokenRecord | null;
    }>;
  };
}

/** What {@link Storage.reader} reads. */
export type StorageRead = Parameters<NonNullable<Storage['reader']>['read']>[0];
/** What {@link Storage.reader} resolves. */
export type StorageReadResult = Awaited<ReturnType<NonNullable<Storage['reader']>['read']>>;
