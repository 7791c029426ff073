import type { Logger } from '../events/emitter.js';
import type { OidcClaimsHook } from '../oidc/id-token.js';
import type { RequestHandler } from 'express';
import type { Jwk } from '../oidc/keys.js';
import type { Store as ExpressSessionStore } from 'express-session';
import type { Strategy } from 'passport-strategy';
import type { PageRenderers } from '../pages/types.js';
import type { AccountsHook, AuthenticatedAccountHook } from '../login/accounts.js';
import type { Storage } from '../storage/types.js';
import type {
  DeveloperAppsOptions,
  DynamicRegistrationOptions,
  InitialAccessTokenCheck,
} from './registration-options.js';

export type {
  DeveloperAppsOptions,
  DynamicRegistrationOptions,
  InitialAccessTokenCheck,
} from './registration-options.js';
export type { UsageOptions } from './usage-options.js';
export type {
  ClientMetadataDocumentOptions,
  DeviceOptions,
  LoginOptions,
  OidcOptions,
  ProviderOptions,
  ResourceOptions,
  TokenOptions,
} from './issuing-options.js';
import type {
  ClientMetadataDocumentOptions,
  DeviceOptions,
  LoginOptions,
  OidcOptions,
  ProviderOptions,
  ResourceOptions,
  TokenOptions,
} from './issuing-options.js';
export type { OidcClaimsHook } from '../oidc/id-token.js';
import type { UsageOptions } from './usage-options.js';
import type { ClientMetadataDocument } from '../clients/documents/document.js';

/**
 * The public, documented form of the options of {@link createAuthorizationServer}. Written by
 * hand so that editors show each option's documentation; `test/config/options.types.test.ts`
 * checks it equals the zod schema that validates it (`src/config/options.ts`), so the two cannot
 * drift. Every option is checked once, when the server is built: a wrong or unknown option
 * throws a `TypeError` naming it, the value given and what to do.
 *
 * @example
 * const server = createAuthorizationServer({
 *   baseUrl: 'https://auth.example.com',
 *   storage: await connectStorage(process.env.DATABASE_URL!, { migrate: true }),
 *   providers: [{ name: 'Example ID', identifier: 'https://id.example.com/' }],
 *   session: { secret: process.env.SESSION_SECRET! },
 *   scopes: { realms: 'List your realms' },
 * });
 */
export interface AuthorizationServerOptions {
  /**
   * Absolute http(s) URL where the routers are mounted: the issuer identifier (RFC 8414 2) and
   * the base of every endpoint URL (`<baseUrl>/oauth/authorize`, `<baseUrl>/oauth/token`, ...).
   * No query, fragment or userinfo. Required.
   *
   * @example 'https://auth.example.com' or, mounted under a path, 'https://example.com/auth'
   */
  baseUrl: string;

  /**
   * Where clients, users, grants, tokens and short-lived state are kept: `memoryStorage()` for
   * tests, `await connectStorage(url)` for SQLite or PostgreSQL, or your own adapter implementing
   * the storage contract. Required.
   *
   * @example memoryStorage()
   */
  storage: Storage;

  /**
   * The OpenID 2.0 providers users may log in at: the only ones ever contacted (an allow-list).
   * At least one. Shown on the selection page in this order.
   *
   * @example [{ name: 'Example ID', identifier: 'https://id.example.com/' }]
   */
  providers: ProviderOptions[];

  /** How users log in. Default: the built-in OpenID 2.0 relying party with the defaults below. */
  login?: LoginOptions;

  /** Lifetimes and rules of codes and tokens. Default: all defaults below. */
  tokens?: TokenOptions;
  /**
   * The device authorization grant (RFC 8628) for clients registered for it: code lifetime,
   * polling interval and abuse limits. Default: all defaults below. See docs/device-flow.md.
   */
  device?: DeviceOptions;
  /**
   * Turns on OpenID Connect: the `openid` and `profile` scopes, ID tokens from the token endpoint,
   * the UserInfo endpoint, `/.well-known/openid-configuration` and the JWKS. Default: off, and
   * requests behave as plain OAuth 2.0. See docs/openid-connect.md.
   */
  oidc?: OidcOptions;

  /**
   * Turns on client ID metadata documents (draft-ietf-oauth-client-id-metadata-document, as the
   * MCP authorization specification uses them): a `client_id` that is an https URL with a path
   * names a public client described by the JSON document served there, fetched (with limits, from
   * public addresses only) and kept in the clients store. Default: off, and such a `client_id` is
   * an unknown client like any other. `{}` turns it on with the defaults below. Needs
   * `clients.create` and `clients.update` in the storage. See docs/client-metadata-documents.md.
   *
   * @example { refuseHosts: ['*.internal.example'], acceptDocument: (doc) => !doc.clientName.includes('Admin') }
   */
  clientMetadataDocuments?: ClientMetadataDocumentOptions;

  /**
   * The login session: the library's own (its own cookie and store; give its `secret`), or your
   * app's express-session (`middleware`). Required. See docs/sessions.md.
   */
  session: SessionOptions;

  /**
   * Scopes the server offers, with the description the consent page shows for each (RFC 6749
   * 3.3 scope-tokens). Default `{}`: any scope registered for a client is accepted, shown by name.
   *
   * @example { realms: 'List your realms', profile: 'See your name' }
   */
  scopes?: Record<string, string>;

  /**
   * The resources (your API, an MCP server) this server issues tokens for (RFC 8707 resource
   * indicators): each gets its protected resource metadata (RFC 9728, served by `metadataRouter`)
   * and is guarded by `requireBearer(server, { resource })`; a token is bound to one resource and
   * refused at every other. A request names its resource with `resource`, or gets the default
   * one. Default `[]`: tokens are bound to no resource, and `resource` parameters are ignored.
   * See docs/mcp.md.
   *
   * @example
   * [
   *   { resource: 'https://example.com/', name: 'Example API', default: true },
   *   { resource: 'https://example.com/mcp', name: 'Example MCP server', scopes: ['realms:read'] },
   * ]
   */
  resources?: ResourceOptions[];

  /**
   * Limits on failed client authentications (RFC 6819 5.1.4.2.3), per `client_id` and per address
   * (`req.ip`, so the host's `trust proxy` setting applies), in fixed windows. Successes are never
   * counted. `false` turns the limit off. Default: 10 failures per client and 50 per address per
   * 15 minutes.
   *
   * @example { windowMs: 60_000, maxFailuresPerClient: 5 }
   */
  rateLimit?: false | RateLimitOptions;

  /**
   * Dynamic client registration (RFC 7591): applications register themselves at
   * `POST /oauth/register` (what MCP clients that connect by themselves fall back to), and the
   * metadata names it as `registration_endpoint`. Public clients only, unless the request carries
   * an initial access token. `true` turns it on with the defaults below. Default `false`: no route,
   * nothing in the metadata. See docs/dynamic-registration.md.
   *
   * @example { initialAccessTokens: [process.env.REGISTRATION_TOKEN!], rateLimit: { maxPerMinute: 5 } }
   */
  dynamicRegistration?: boolean | DynamicRegistrationOptions;

  /**
   * The limits of the developer page (`developerRouter`), where members register their own
   * applications: how many each may have, whether the operator approves them first, how many
   * members an application the operator has not verified may be authorized by, the scopes they
   * may have, how recent a sign-in creating or rotating a secret needs. The page itself is off
   * until the host mounts it; the reach cap applies to members' applications wherever they are
   * used. See docs/developer-page.md.
   *
   * @example { maxAppsPerMember: 3, requireApproval: true, unverifiedReach: 50 }
   */
  developerApps?: DeveloperAppsOptions;

  /**
   * Per-app usage (last use, and day counts of tokens issued, refreshes and bearer uses), kept
   * when the storage has a `usage` store (the built-in adapters have one): counted in memory and
   * written in batches, never on a request. `false`: nothing is counted. Shown on the applications
   * and developer pages and by the CLI (`clients usage`). See docs/operating.md, "Per-app usage".
   *
   * @example { flushSeconds: 30 }
   */
  usage?: false | UsageOptions;

  /**
   * Maps every verified login to your own account, or refuses it with a message shown to the
   * user; return the same account for a second provider to link it. Tokens, consents,
   * introspection, events and `requireBearer` then carry your account id. Default: one library
   * user per claimed identifier. See docs/providers-and-accounts.md.
   *
   * @example async (login) => ({ accountId: (await users.bySteamId(login.accountKey)).id })
   */
  accounts?: AccountsHook;

  /**
   * Accepts an end user your app has already signed in itself (its own passport login, say): the
   * authorization endpoint then asks for consent without a second login. Default: none.
   *
   * @example (req) => (req.user ? { accountId: req.user.id, displayName: req.user.name } : undefined)
   */
  authenticatedAccount?: AuthenticatedAccountHook;

  /**
   * Require `state` on implicit authorization requests (RFC 9700 2.1), refusing those without.
   * Default `true`.
   */
  requireStateForImplicit?: boolean;

  /**
   * Which rules the server keeps. `'oauth2'` (the default): OAuth 2.0 as the service specification
   * describes it, with RFC 9700's advice: the implicit grant, and a redirect URI under the
   * registered one. `'oauth2.1'` (the MCP authorization specification asks for an OAuth 2.1
   * authorization server): no implicit grant (`unsupported_response_type`, and no implicit client
   * registers), PKCE S256 for every code flow (confidential clients too), redirect URIs matched
   * exactly (a native app's loopback port still free, RFC 8252 7.3), no access token in a query
   * string (`invalid_request`), and public clients' refresh tokens rotated
   * (`tokens.rotateRefreshTokens` may not be `false`). See docs/oauth-2.1.md.
   *
   * @example 'oauth2.1'
   */
  profile?: 'oauth2' | 'oauth2.1';

  /**
   * Replacements for some of the HTML pages (selection, consent, error, applications); the others
   * keep their default. Default `{}`.
   *
   * @example { consent: (data) => renderMyConsentPage(data) }
   */
  pages?: Partial<PageRenderers>;

  /**
   * The single time source of the library, in epoch milliseconds. Default `() => Date.now()`;
   * tests pass a controllable clock.
   */
  clock?: () => number;

  /**
   * Where the library logs warnings and errors (a listener that throws, a 5xx). Default: `console`
   * with an `[openid-oauth-bridge]` prefix.
   *
   * @example pino() (any object with `warn(message, details)` and `error(message, details)`)
   */
  logger?: Logger;

  /**
   * Called once for every request the library answers with a 5xx (an unknown error, a storage
   * outage, a provider that does not answer), after it was logged; the client sees no internals.
   * What it throws is logged and ignored. Default: none.
   *
   * @example (error, { requestId, route }) => Sentry.captureException(error, { tags: { requestId, route } })
   */
  onError?: ErrorHook;
}

/** {@link AuthorizationServerOptions.session}. */
export interface SessionOptions {
  /**
   * Signs the session cookie: at least 32 characters of randomness, kept secret (an environment
   * variable, not the code). An array allows rotation: the first signs, all verify. Required
   * unless `middleware` is given.
   *
   * @example process.env.SESSION_SECRET (generate one: `node -e "console.log(crypto.randomBytes(32).toString('base64url'))"`)
   */
  secret?: string | string[];
  /**
   * Your app's own express-session middleware: the library then keeps its state in your session,
   * under its own key, with no cookie of its own; `secret`, `cookieName`, `store` and
   * `secureCookie` do not apply. Default: the library's own session.
   *
   * @example session({ secret, resave: false, saveUninitialized: false, store })
   */
  middleware?: RequestHandler;
  /** The library's own cookie name, so a host's session is left alone. Default `openid_oauth_bridge.sid`. */
  cookieName?: string;
  /** Idle timeout in seconds (at least 60): a login session ends this long after its last request. Default `1800`. */
  maxAge?: number;
  /**
   * Absolute lifetime in seconds (at least `maxAge`): a login session ends this long after it
   * started, however active. Default `36000` (10 hours).
   */
  absoluteMaxAge?: number;
  /** An express-session store. Default: one over the storage's ephemeral store. */
  store?: ExpressSessionStore;
  /** Send the cookie with `Secure`. Default: `true` when `baseUrl` is https. */
  secureCookie?: boolean;
}

/** {@link AuthorizationServerOptions.rateLimit}. */
export interface RateLimitOptions {
  /** Length of a window in milliseconds, 1000 to 86400000. Default `900000` (15 minutes). */
  windowMs?: number;
  /** Failed authentications of one `client_id` per window before `429`; `false`: no limit. Default `10`. */
  maxFailuresPerClient?: number | false;
  /**
   * Failed authentications from one address (`req.ip`; an IPv6 address counts per /56) per window
   * before `429`, across client ids; `false`: no limit. Default `50`.
   */
  maxFailuresPerAddress?: number | false;
}

/** Where a failure reported to {@link AuthorizationServerOptions.onError} happened. */
export interface ErrorContext {
  /** The request's `X-Request-Id`: the incoming one if sane, else generated; sent back in the response. */
  requestId: string;
  /** Method and path, without the query, e.g. `POST /oauth/token`. */
  route: string;
  /**
   * 500 for an unknown error (`server_error`), 503 for a storage outage (`temporarily_unavailable`),
   * 502 for an OpenID provider that does not answer.
   */
  status: number;
}

/** The host's error hook: reports to an error tracker, say. Its own errors are logged and ignored. */
export type ErrorHook = (error: unknown, context: ErrorContext) => void;

export type { Logger } from '../events/emitter.js';

/** Options after validation, with every default filled in (`server.options`). */
export interface ResolvedOptions {
  baseUrl: string;
  storage: Storage;
  providers: ProviderOptions[];
  login: { strategy?: Strategy; timeoutMs: number; maxResponseBytes: number };
  tokens: Required<TokenOptions>;
  device: Required<DeviceOptions>;
  oidc?: {
    keySecret?: string;
    keys?: Jwk[];
    signingAlgorithm: 'RS256' | 'ES256';
    idTokenTtl: number;
    claims?: OidcClaimsHook;
  };
  clientMetadataDocuments?: {
    maxBytes: number;
    timeoutMs: number;
    minCacheSeconds: number;
    maxCacheSeconds: number;
    allowHosts?: string[];
    refuseHosts: string[];
    acceptDocument?: (document: ClientMetadataDocument) => boolean | Promise<boolean>;
    allowLoopbackOrigins: string[];
    maxFetchesPerMinute: number | false;
    ca: string[];
  };
  session: {
    secret?: string | string[];
    middleware?: RequestHandler;
    cookieName: string;
    maxAge: number;
    absoluteMaxAge: number;
    store?: ExpressSessionStore;
    secureCookie?: boolean;
  };
  scopes: Record<string, string>;
  resources: ResourceOptions[];
  rateLimit: false | Required<RateLimitOptions>;
  dynamicRegistration:
    | false
    | {
        initialAccessTokens?: string[] | InitialAccessTokenCheck;
        scopes?: string[];
        unusedTtl: number;
        rateLimit: false | { maxPerMinute: number; maxPerHour: number };
      };
  developerApps: {
    maxAppsPerMember: number;
    requireApproval: boolean;
    unverifiedReach: number | false;
    scopes?: string[];
    recentLoginMinutes: number;
    maxSecretOverlapMinutes: number;
    maxCreatedPerHour: number;
  };
  usage: false | { flushSeconds: number; maxPending: number };
  accounts?: AccountsHook;
  authenticatedAccount?: AuthenticatedAccountHook;
  requireStateForImplicit: boolean;
  profile: 'oauth2' | 'oauth2.1';
  pages: Partial<PageRenderers>;
  clock: () => number;
  logger?: Logger;
  onError?: ErrorHook;
}
