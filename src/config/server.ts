import type { Strategy } from 'passport-strategy';
import type { ServerEvents } from '../events/emitter.js';
import type { PageRenderers } from '../pages/types.js';
import type { SessionLoader } from '../session/login-session.js';
import type { KeySet } from '../oidc/keys.js';
import type { Storage } from '../storage/types.js';
import type { ResourceSet } from '../rules/resources.js';
import type { DocumentClients } from '../clients/documents/loader.js';
import type { UsageRecorder } from '../usage/recorder.js';
import type { Logger, ResolvedOptions } from './options.js';

/** Absolute URLs of the endpoints, derived from `baseUrl` once. */
export interface EndpointUrls {
  /** Where the routers are mounted, without a trailing slash. */
  base: string;
  /** The issuer identifier (RFC 8414 2, RFC 9207): `base`. */
  issuer: string;
  authorization: string;
  token: string;
  /** RFC 7009. */
  revocation: string;
  /** RFC 7662. */
  introspection: string;
  /** RFC 8414 3: `/.well-known/oauth-authorization-server` inserted between origin and path. */
  metadata: string;
  /** OpenID Connect Discovery 1.0 section 4: `/.well-known/openid-configuration` appended to the issuer. */
  openidConfiguration: string;
  /** The JWK set of the ID token signing keys (OpenID Connect). */
  jwks: string;
  /** OpenID Connect Core 5.3. */
  userinfo: string;
  /** OpenID Connect RP-Initiated Logout 1.0. */
  endSession: string;
  /** RFC 7591 3: the client registration endpoint (served with `dynamicRegistration` on). */
  registration: string;
  /** RFC 8628 3.1: where a device asks for a device code and a user code. */
  deviceAuthorization: string;
  /** RFC 8628 3.2: the verification page, where a person types the user code (`verification_uri`). */
  device: string;
  /** The origin of `base` (scheme, host and port). */
  origin: string;
  /** Where an authorization continues after a login or a switch of account. */
  resume: string;
  /** Where the consent page posts its decision. */
  consentDecision: string;
  /** Where a login starts (`?op=` names the provider). */
  login: string;
  loginCallback: string;
  logout: string;
  /** The end user's authorized applications page, and where it posts a revocation. */
  applications: string;
  applicationsRevoke: string;
  /** The developer page (`developerRouter`), where members register their own applications. */
  developers: string;
}

/**
 * The configured authorization server: built once from validated options and passed to every
 * router factory. Holds no per-request state.
 */
export interface AuthorizationServer {
  readonly options: ResolvedOptions;
  readonly storage: Storage;
  readonly urls: EndpointUrls;
  /** The resources tokens are issued for (the `resources` option), resolved. */
  readonly resources: ResourceSet;
  readonly pages: PageRenderers;
  readonly clock: () => number;
  readonly logger: Logger;
  /**
   * Logs a warning about the server's setup the first time it is seen, and never again: a
   * misconfiguration noticed on a request is said once, not on every request.
   *
   * @internal
   */
  warnOnce(message: string): void;
  /** Events for an audit log or metrics: `server.events.on('token.issued', listener)`. */
  readonly events: ServerEvents;
  /** The passport strategy that logs users in. */
  readonly loginStrategy: Strategy;
  /**
   * The login session: the library's own express-session (own cookie, own store), or the host's
   * (`session.middleware`).
   */
  readonly session: LoginSessionHandle;
  /** OpenID Connect, when `oidc` is set: the signing keys. */
  readonly oidc?: OidcRuntime;
  /**
   * Clients named by the URLs of their metadata documents, when `clientMetadataDocuments` is set.
   *
   * @internal
   */
  readonly clientDocuments?: DocumentClients;
  /**
   * Per-app usage, when the storage has a `usage` store and the `usage` option is not `false`:
   * counts held in memory and written every `usage.flushSeconds`. `flush()` writes them now;
   * `closeGracefully(http, { server })` writes the last ones at shutdown.
   */
  readonly usage?: UsageRecorder;
}

/** What OpenID Connect needs at run time. */
export interface OidcRuntime {
  /** The signing keys, read again at most once a minute. */
  readonly keys: { current(): Promise<KeySet> };
  /** The algorithms the keys sign with (the discovery document's). */
  readonly algorithms: readonly string[];
}

/** The login session's middleware. */
export interface LoginSessionHandle {
  /** Runs express-session; resolves the request that carries the session. */
  readonly load: SessionLoader;
  /** The library's own session, not the host's. */
  readonly own: boolean;
}

/** A configured OpenID provider. */
export type ConfiguredProvider = ResolvedOptions['providers'][number];
