/**
 * The client part of the storage contract (src/storage/types.ts): what a registered client
 * application is, and the store that keeps them.
 */

/**
 * The grant a client is registered for: `authorization_code` (and refresh), `device_code` (RFC
 * 8628, and refresh), `implicit`, or `client_credentials` (RFC 6749 4.4: a confidential client
 * that acts as itself, for no user; no refresh).
 */
export type ClientGrantType = 'authorization_code' | 'implicit' | 'device_code' | 'client_credentials';

/**
 * A registered client application, as the {@link ClientStore} keeps it: registered by the
 * operator (the CLI, `registerClient`), by a member on the developer page (`developerRouter`), or,
 * when the operator turns them on, by itself (client metadata documents, dynamic registration).
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
   * `device_code` or `client_credentials` client, which has none.
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
  /**
   * Optional; absent or `null`: the operator's. The member who made the client on the developer
   * page (their account id, as tokens name them): only they see and change it there; the operator
   * may give it to another member (CLI `clients transfer`).
   */
  ownerId?: string | null;
  /**
   * Optional; absent means `false`. The operator vouches for a member's client (CLI `clients
   * verify`): the consent page says so, and the reach cap of unverified clients no longer applies.
   */
  verified?: boolean;
  /**
   * Optional; absent means `false`. A member's client waiting for the operator's approval (with
   * `developerApps.requireApproval`, CLI `clients approve`): it can neither authorize nor
   * authenticate until approved, as a disabled client.
   */
  awaitingApproval?: boolean;
  /** Optional; absent or `null`: none. What the application does, in its maker's words: shown on the consent page. */
  description?: string | null;
  /** Optional; absent or `null`: none. The application's home page, an https URL: linked from the consent page. */
  homepageUri?: string | null;
  /**
   * Optional; absent or `null`: none. The client's previous secret after a rotation that keeps
   * it valid for a while (the developer page's overlap): its SHA-256 hash, accepted as the
   * client's secret until `expiresAt` (epoch ms).
   */
  previousSecret?: { hash: string; expiresAt: number } | null;
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
    | 'ownerId'
    | 'verified'
    | 'awaitingApproval'
    | 'description'
    | 'homepageUri'
    | 'previousSecret'
  >
>;

/** Which clients {@link ClientStore.list} lists: every one, or those of one owner. */
export interface ClientListFilter {
  /** Only the clients whose `ownerId` equals this exactly. */
  ownerId?: string;
}

/**
 * Registered client applications. Registration is out of band: only `find` is on the request
 * path; the operator methods serve the CLI, `registerClient` and the developer page, and an adapter whose clients are
 * managed elsewhere may leave them out.
 */
export interface ClientStore {
  /** Required. The client whose id equals `clientId` exactly, or `null`. */
  find(clientId: string): Promise<ClientRecord | null>;
  /** Operator (optional). Inserts a client. Rejects if the `clientId` is taken. */
  create?(client: ClientRecord): Promise<void>;
  /**
   * Operator (optional; the developer page needs it). The clients matching `filter` (every one
   * without it), ordered by `createdAt` then `clientId`.
   */
  list?(filter?: ClientListFilter): Promise<ClientRecord[]>;
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
