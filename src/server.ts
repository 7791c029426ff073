import type { RequestHandler } from 'express';
import type { Strategy } from 'passport-strategy';
import {
  resolveOptions,
  type AuthorizationServerOptions,
  type Logger,
  type ResolvedOptions,
} from './config/options.js';
import { ServerEvents } from './events/emitter.js';
import { RelyingParty } from './login/openid/relying-party.js';
import { OpenIdStrategy } from './login/openid/strategy.js';
import { defaultPages } from './pages/default-pages.js';
import type { PageRenderers } from './pages/types.js';
import { AdapterSessionStore } from './session/adapter-store.js';
import { hostLoginSession, loginSession } from './session/login-session.js';
import { ephemeralNonces } from './login/nonces.js';
import type { Storage } from './storage/types.js';
import type { ReadOperation } from './storage/read-ahead.js';

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
}

/**
 * The configured authorization server: built once from validated options and passed to every
 * router factory. Holds no per-request state.
 */
export interface AuthorizationServer {
  readonly options: ResolvedOptions;
  readonly storage: Storage;
  readonly urls: EndpointUrls;
  readonly pages: PageRenderers;
  readonly clock: () => number;
  readonly logger: Logger;
  /** Events for an audit log or metrics: `server.events.on('token.issued', listener)`. */
  readonly events: ServerEvents;
  /** The passport strategy that logs users in. */
  readonly loginStrategy: Strategy;
  /**
   * The login session: the library's own express-session (own cookie, own store), or the host's
   * (`session.middleware`).
   */
  readonly session: LoginSessionHandle;
}

/** The login session's middleware, and how it reads other rows with the session. */
export interface LoginSessionHandle {
  readonly middleware: RequestHandler;
  /** The library's own session, not the host's. */
  readonly own: boolean;
  /**
   * Runs `run` (which runs `middleware`) so that the session is read in one batch with `reads`;
   * `done` receives the view of the storage that answers them. Present only where it saves a
   * round trip: the library's own session in the library's store, over a storage whose `batch`
   * is one round trip (`batchSavesRoundTrips`).
   *
   * @internal
   */
  readonly readAlong?: (
    reads: readonly ReadOperation[],
    done: (view: Storage) => void,
    run: () => void,
  ) => void;
}

/** A configured OpenID provider. */
export type ConfiguredProvider = ResolvedOptions['providers'][number];

/**
 * The configured provider with exactly this identifier or name: the allow-list every route checks
 * before anything is contacted.
 */
export function findProvider(
  server: AuthorizationServer,
  identifierOrName: string,
): ConfiguredProvider | undefined {
  return server.options.providers.find(
    (p) => p.identifier === identifierOrName || p.name === identifierOrName,
  );
}

/** Session key under which the OpenID login state is kept between redirect and callback. */
export const LOGIN_SESSION_KEY = 'openidOAuthBridgeLogin';

const consoleLogger: Logger = {
  warn: (message, details) => console.warn(`[openid-oauth-bridge] ${message}`, details ?? ''),
  error: (message, details) => console.error(`[openid-oauth-bridge] ${message}`, details ?? ''),
};

/**
 * Builds the authorization server from options, validating them once: a wrong option throws a
 * `TypeError` naming its path.
 *
 * @example
 * const server = createAuthorizationServer({
 *   baseUrl: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   providers: [{ name: 'Example ID', identifier: 'https://id.example.com/' }],
 *   session: { secret: process.env.SESSION_SECRET! },
 * });
 * app.use(discoveryRouter(server), authorizeRouter(server), tokenRouter(server));
 */
export function createAuthorizationServer(input: AuthorizationServerOptions): AuthorizationServer {
  const options = resolveOptions(input);
  const base = options.baseUrl.replace(/\/+$/, '');
  const urls: EndpointUrls = {
    base,
    issuer: base,
    authorization: `${base}/oauth/authorize`,
    token: `${base}/oauth/token`,
    revocation: `${base}/oauth/revoke`,
    introspection: `${base}/oauth/introspect`,
    metadata: metadataUrl(base),
    origin: new URL(base).origin,
    resume: `${base}/oauth/authorize/resume`,
    consentDecision: `${base}/oauth/authorize/decision`,
    login: `${base}/oauth/login`,
    loginCallback: `${base}/oauth/login/callback`,
    logout: `${base}/oauth/logout`,
    applications: `${base}/oauth/applications`,
    applicationsRevoke: `${base}/oauth/applications/revoke`,
  };
  const clock = options.clock;
  const storage = options.storage;

  const absoluteMs = options.session.absoluteMaxAge * 1000;
  const idleMs = options.session.maxAge * 1000;
  const hostSession = options.session.middleware;
  let session: LoginSessionHandle;
  if (hostSession) {
    session = { middleware: hostLoginSession(hostSession, { idleMs, absoluteMs, clock }), own: false };
  } else {
    const ownStore =
      options.session.store === undefined
        ? new AdapterSessionStore(storage.ephemeral, clock, idleMs, { touch: false })
        : undefined;
    session = {
      middleware: loginSession({
        cookieName: options.session.cookieName,
        secret: options.session.secret!,
        store: ownStore ?? options.session.store!,
        secure: options.session.secureCookie ?? base.startsWith('https:'),
        path: new URL(`${base}/`).pathname,
        idleMs,
        absoluteMs,
        clock,
      }),
      own: true,
      ...(ownStore !== undefined && storage.batch !== undefined && storage.batchSavesRoundTrips === true
        ? {
            readAlong: (reads: readonly ReadOperation[], done: (view: Storage) => void, run: () => void) =>
              ownStore.readAlong(storage, reads, done, run),
          }
        : {}),
    };
  }

  const loginStrategy =
    options.login.strategy ??
    new OpenIdStrategy(
      new RelyingParty({
        providers: options.providers,
        returnTo: urls.loginCallback,
        realm: `${base}/`,
        nonces: ephemeralNonces(storage.ephemeral, clock),
        clock,
        timeoutMs: options.login.timeoutMs,
        maxResponseBytes: options.login.maxResponseBytes,
      }),
      { origin: urls.origin, sessionKey: LOGIN_SESSION_KEY },
    );

  const logger = options.logger ?? consoleLogger;

  const server: AuthorizationServer = {
    options,
    storage,
    events: new ServerEvents(() => server.logger),
    urls,
    pages: { ...defaultPages, ...options.pages },
    clock,
    logger,
    loginStrategy,
    session,
  };
  return server;
}

/** RFC 8414 3: the well-known segment goes between the host and the issuer's path. */
function metadataUrl(issuer: string): string {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}/.well-known/oauth-authorization-server${path}`;
}
