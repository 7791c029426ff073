import type { Strategy } from 'passport-strategy';
import type { ClientMetadataDocument } from '../clients/documents/document.js';
import type { OidcClaimsHook } from '../oidc/id-token.js';
import type { Jwk } from '../oidc/keys.js';
import type { ProviderPreset, SregField } from '../login/openid/provider-policy.js';

/*
 * The options of what the server issues and how it signs in: its resources, logins, tokens,
 * device flow, OpenID Connect, and the clients it fetches from their documents. Parts of
 * `AuthorizationServerOptions`, re-exported from `./types.ts`.
 */

/** One OpenID 2.0 provider of {@link AuthorizationServerOptions.providers}. */
export interface ProviderOptions {
  /**
   * Shown on the selection page (1 to 100 characters); also accepted as the `opIdentifier`
   * shorthand of an authorization request. Unique among the providers.
   *
   * @example 'Example ID'
   */
  name: string;
  /**
   * The provider's OpenID 2.0 discovery URL (an OP identifier or a claimed-identifier URL), absolute
   * http(s). Unique among the providers.
   *
   * @example 'https://id.example.com/'
   */
  identifier: string;
  /**
   * The OP endpoints discovery may name: exact URLs or patterns of the whole URL. Default: any
   * endpoint at the identifier's origin. Set by the presets (`steam()`, `launchpad()`, …).
   */
  endpoints?: readonly (string | RegExp)[];
  /** The claimed identifiers this provider may assert, a pattern of the whole URL. Default: any at its origins. */
  claimedId?: RegExp;
  /** Shown on the selection page: an https or `data:image/…` URL. */
  icon?: string;
  /** Simple Registration fields to ask for; only signed values are kept. Default: none. */
  sreg?: readonly SregField[];
  /** The account key and display name of a verified assertion. Default: the claimed identifier. */
  account?: ProviderPreset['account'];
  /** Launchpad teams to ask about (`launchpad({ teams })`). Default: none. */
  teams?: readonly string[];
  /** Where the account's profile is read after a login (`steam({ webApi })`). Default: none. */
  profile?: ProviderPreset['profile'];
}

/** One resource of {@link AuthorizationServerOptions.resources}. */
export interface ResourceOptions {
  /**
   * The resource identifier (RFC 8707 2): the absolute http(s) URL clients reach it at, without a
   * fragment; the audience of its tokens. An origin with and without its trailing `/` is the same
   * resource. Unique among the resources.
   *
   * @example 'https://example.com/mcp'
   */
  resource: string;
  /** Shown to people: the metadata's `resource_name` and the consent page. Default: none. */
  name?: string;
  /**
   * The scopes it knows, among those the server offers (`scopes_supported` of its metadata).
   * Default: every scope the server offers.
   */
  scopes?: string[];
  /**
   * Requests that name no resource get tokens for this one: existing clients keep working at
   * your API while new ones name theirs. At most one resource is the default. Default `false`.
   */
  default?: boolean;
  /**
   * What its access tokens are: `'opaque'`, a random string only this server can read (through
   * `requireBearer` or introspection), or `'jwt'`, a JWT access token (RFC 9068) signed with the
   * OpenID Connect keys, which a resource server elsewhere verifies with the JWKS alone. A JWT
   * revoked here is refused by `requireBearer` at once, but a remote resource server accepts it
   * until it expires: keep `accessTokenTtl` short. `'jwt'` needs `oidc`. See
   * docs/jwt-access-tokens.md. Default `'opaque'`.
   */
  accessTokenFormat?: 'opaque' | 'jwt';
  /**
   * The lifetime of its access tokens in seconds, 1 to 86400 (`expires_in`, and a JWT's `exp`).
   * Default: `tokens.accessTokenTtl`.
   */
  accessTokenTtl?: number;
}

/** {@link AuthorizationServerOptions.login}. */
export interface LoginOptions {
  /**
   * A passport strategy that logs users in instead of the built-in OpenID 2.0 relying party (see
   * `LoginIdentity` for what it must yield). Default: the built-in relying party.
   */
  strategy?: Strategy;
  /**
   * Per outbound request to a provider (discovery, verification), in milliseconds, 100 to 60000.
   * Default `5000`.
   */
  timeoutMs?: number;
  /**
   * Largest response read from a provider, in bytes, 1024 to 10485760. Default `262144` (256 KiB).
   */
  maxResponseBytes?: number;
}

/** {@link AuthorizationServerOptions.tokens}. */
export interface TokenOptions {
  /**
   * Access token lifetime in seconds (the `expires_in` of RFC 6749 5.1), 1 to 86400. Default
   * `3600` (one hour, as the service specification says).
   */
  accessTokenTtl?: number;
  /**
   * Authorization code lifetime in seconds, 1 to 600 (RFC 6749 4.1.2 recommends at most 10
   * minutes). Default `60`.
   */
  codeTtl?: number;
  /**
   * Issue a new refresh token at each refresh, and revoke the grant when an old one is used again
   * (RFC 9700 4.14.2): `true` for every client, `false` for none. Default `'public-clients'`: the
   * refresh tokens of public clients (native apps, devices: no secret binds their tokens to them)
   * rotate, as RFC 9700 4.14 advises; those of confidential clients stay the same until revoked.
   */
  rotateRefreshTokens?: boolean | 'public-clients';
  /**
   * Refuse a refresh (`grant_type=refresh_token`) that does not repeat `redirect_uri`, as the
   * service specification's token request lists it. Default `false`: RFC 6749 section 6 defines no
   * `redirect_uri` for a refresh and client libraries do not send one, so it is optional; when
   * sent, it is checked against the registered redirect URI either way.
   */
  requireRedirectUriOnRefresh?: boolean;
}

/** {@link AuthorizationServerOptions.device}. */
export interface DeviceOptions {
  /**
   * Lifetime of a device code and its user code, in seconds (`expires_in`), 60 to 1800. Default
   * `600`: ten minutes to pick up a phone, sign in and approve.
   */
  codeTtl?: number;
  /** The polling interval given to devices, in seconds, 1 to 60. Default `5` (RFC 8628 3.2). */
  interval?: number;
  /**
   * Device authorization requests of one client per minute, whoever sends them, before `429`
   * (each user of a command-line tool shares its `client_id`); `false`: no limit. Default `300`.
   */
  maxRequestsPerClient?: number | false;
  /**
   * User codes typed per minute from one address (`req.ip`), or by one signed-in account, right or
   * wrong, 1 to 1000: past it every attempt, the right code included, waits for the minute to end
   * (RFC 8628 5.1). Default `10`.
   */
  maxUserCodeAttempts?: number;
  /**
   * User codes typed per minute by everyone not signed in, together: past it they wait for the
   * minute to end, so guessing from many addresses stays slow too. A signed-in person is never
   * held by it. Default `1000`.
   */
  maxAnonymousUserCodeAttempts?: number;
}

/**
 * {@link AuthorizationServerOptions.oidc}. The signing keys come from one of two places:
 * `keySecret` (the library makes and rotates them, kept in the storage's `keys` store with their
 * private parts sealed by a key derived from this secret) or `keys` (your own, fixed until a
 * restart).
 */
export interface OidcOptions {
  /**
   * At least 32 characters of randomness, kept secret: seals the private signing keys at rest.
   * Every instance needs the same one. Changing it makes the stored keys unusable (rotate after).
   */
  keySecret?: string;
  /**
   * Your own signing keys instead: private JWKs (RSA or P-256) with `kid` and `alg` (`RS256` or
   * `ES256`); the first signs, all are published. Nothing is stored. One must be `RS256` (OpenID
   * Connect Discovery 1.0 section 3); ES256 keys alone are refused when the server is built.
   */
  keys?: Jwk[];
  /** The algorithm of keys the library makes: `RS256` (every OpenID Connect client has it) or `ES256`. Default `RS256`. */
  signingAlgorithm?: 'RS256' | 'ES256';
  /** ID token lifetime in seconds, 60 to 86400. Default `3600`. */
  idTokenTtl?: number;
  /**
   * Your own claims for a subject (the user id tokens carry: yours with `accounts`), given the
   * scopes granted: added to ID tokens and UserInfo answers after the login's claims. Names the
   * issuer decides (`iss`, `sub`, `aud`, `exp`, `iat`, `auth_time`, `nonce`, `azp`, ...) are
   * dropped; values must be JSON.
   *
   * @example
   * claims: async (subject, scopes) => (scopes.includes('email') ? { email: await emailOf(subject) } : {})
   */
  claims?: OidcClaimsHook;
}

/** {@link AuthorizationServerOptions.clientMetadataDocuments}. */
export interface ClientMetadataDocumentOptions {
  /**
   * Largest document accepted, in bytes, 16384 to 1048576. Default `65536`. (Real documents list
   * many redirect URIs and fields; caps of a few KiB refused some in the field.)
   */
  maxBytes?: number;
  /** Deadline for a whole fetch, from the name's lookup to the last byte, in ms, 500 to 10000. Default `4000`. */
  timeoutMs?: number;
  /**
   * Shortest time a fetched document is used before it is fetched again, in seconds, whatever its
   * `Cache-Control` says (`no-store`, `max-age=0`): 0 to 3600. Default `60`.
   */
  minCacheSeconds?: number;
  /**
   * Longest time a fetched document is used before it is fetched again, in seconds, whatever its
   * `Cache-Control` says: at least `minCacheSeconds`, at most 604800. It bounds how long a change
   * to a document (a new redirect URI, a new name) waits to be seen. Default `3600`.
   */
  maxCacheSeconds?: number;
  /**
   * Only documents on these hosts are fetched: `app.example` (that host) or `*.app.example` (its
   * subdomains). Default: any host.
   */
  allowHosts?: string[];
  /** Documents on these hosts are never fetched (same patterns as `allowHosts`). Default `[]`. */
  refuseHosts?: string[];
  /**
   * Your decision on each document, once it is fetched and valid: `false` (or a promise of it)
   * refuses the client, as a refused fetch does. What it throws refuses the client too, and is
   * logged. Default: every valid document is accepted.
   *
   * @example (doc) => doc.redirectUris.every((uri) => uri.startsWith('http://localhost') || uri.startsWith('https://'))
   */
  acceptDocument?: (document: ClientMetadataDocument) => boolean | Promise<boolean>;
  /**
   * For local development and tests only: https origins (`https://localhost:8443`) whose documents
   * are fetched although they resolve to a loopback address. Nothing on a loopback address is
   * fetched without it, and private addresses never are. Default `[]`.
   */
  allowLoopbackOrigins?: string[];
  /**
   * Document fetches one address (`req.ip`; an IPv6 address counts per /56) may cause per minute,
   * 1 to 10000, cached documents not counted: past it, `429` with `Retry-After` (an error page at
   * the authorization endpoint), so no one can make the server fetch URLs at will. `false`: no
   * limit. Default `30`.
   */
  maxFetchesPerMinute?: number | false;
  /**
   * Certificates (PEM) trusted for these fetches besides Node's own (its roots and
   * `NODE_EXTRA_CA_CERTS`): a development CA for `allowLoopbackOrigins`. Default `[]`.
   */
  ca?: string[];
}
