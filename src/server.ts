import type { AuthorizationServerOptions, Logger, ResolvedOptions } from './config/options.js';
import { resolveOptions } from './config/resolve.js';
import type { AuthorizationServer, EndpointUrls, LoginSessionHandle, OidcRuntime } from './config/server.js';
import { OAuthError } from './errors/oauth-error.js';
import { declaredResources } from './rules/resources.js';
import { KeySecretError, keyRing, SIGNING_ALGORITHMS } from './oidc/keys.js';
import type { SigningKeyRecord, Storage } from './storage/types.js';
import { ServerEvents } from './events/emitter.js';
import { emit } from './events/emit.js';
import { RelyingParty } from './login/openid/relying-party.js';
import { OpenIdStrategy } from './login/openid/strategy.js';
import { defaultPages } from './pages/default-pages.js';
import { LOGIN_SESSION_KEY } from './session/state.js';
import { AdapterSessionStore } from './session/adapter-store.js';
import { hostLoginSession, loginSession } from './session/login-session.js';
import { ephemeralNonces } from './login/nonces.js';
import { documentClients } from './clients/documents/loader.js';
import { usageRecorder } from './usage/recorder.js';

export type {
  AuthorizationServer,
  ConfiguredProvider,
  EndpointUrls,
  LoginSessionHandle,
} from './config/server.js';

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
    openidConfiguration: `${base}/.well-known/openid-configuration`,
    jwks: `${base}/oauth/jwks`,
    userinfo: `${base}/oauth/userinfo`,
    endSession: `${base}/oauth/end-session`,
    registration: `${base}/oauth/register`,
    deviceAuthorization: `${base}/oauth/device_authorization`,
    device: `${base}/oauth/device`,
    origin: new URL(base).origin,
    resume: `${base}/oauth/authorize/resume`,
    consentDecision: `${base}/oauth/authorize/decision`,
    login: `${base}/oauth/login`,
    loginCallback: `${base}/oauth/login/callback`,
    logout: `${base}/oauth/logout`,
    applications: `${base}/oauth/applications`,
    applicationsRevoke: `${base}/oauth/applications/revoke`,
    developers: `${base}/developers`,
  };
  const clock = options.clock;
  const storage = options.storage;

  const absoluteMs = options.session.absoluteMaxAge * 1000;
  const idleMs = options.session.maxAge * 1000;
  const hostSession = options.session.middleware;
  let session: LoginSessionHandle;
  if (hostSession) {
    session = { load: hostLoginSession(hostSession, { idleMs, absoluteMs, clock }), own: false };
  } else {
    const ownStore =
      options.session.store === undefined
        ? new AdapterSessionStore(storage.ephemeral, clock, idleMs)
        : undefined;
    session = {
      load: loginSession({
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
  const warned = new Set<string>();
  let toldWrongSecret = false;

  const events = new ServerEvents(() => server.logger);
  const server: AuthorizationServer = {
    options,
    storage,
    events,
    urls,
    resources: declaredResources(options.resources),
    pages: { ...defaultPages, ...options.pages },
    clock,
    logger,
    loginStrategy,
    session,
    ...(options.oidc
      ? {
          oidc: oidcRuntime(options.oidc, storage, clock, {
            onStale: (err) =>
              server.warnOnce(
                `oidc: the signing keys could not be read again (${(err as Error).message}); the keys read before are used for at most 5 minutes`,
              ),
            onWrongSecret: (err) => {
              if (toldWrongSecret) return;
              toldWrongSecret = true;
              server.logger.error(
                `oidc.keySecret does not open the stored signing key ${err.kid}: give this instance the oidc.keySecret the keys were sealed with (the same on every instance); until then the JWKS and every ID token answer server_error`,
              );
            },
            // Made while answering a request, but for the server: no request's address or id.
            onMade: (made) => {
              for (const { kid, alg, state } of made) {
                if (state !== 'retired') emit(server, { type: 'signing_key.created', kid, alg, state });
              }
            },
          }),
        }
      : {}),
    ...(options.clientMetadataDocuments
      ? {
          clientDocuments: documentClients(options.clientMetadataDocuments, {
            storage,
            clock,
            get events() {
              return server.events;
            },
            get logger() {
              return server.logger;
            },
            offeredScopes: () => Object.keys(options.scopes),
          }),
        }
      : {}),
    // Per-app usage: counted in memory, written in batches (docs/operating.md, "Per-app usage").
    ...(options.usage !== false && storage.usage !== undefined
      ? {
          usage: usageRecorder({
            store: storage.usage,
            clock,
            logger: () => server.logger,
            events,
            ...options.usage,
          }),
        }
      : {}),
    warnOnce(message) {
      if (warned.has(message)) return;
      warned.add(message);
      server.logger.warn(message);
    },
  };
  return server;
}

/** The signing keys: the host's own, or kept in the storage and sealed with `keySecret`. */
function oidcRuntime(
  oidc: NonNullable<ResolvedOptions['oidc']>,
  storage: Storage,
  clock: () => number,
  told: {
    onStale: (error: unknown) => void;
    onWrongSecret: (error: KeySecretError) => void;
    onMade: (made: SigningKeyRecord[]) => void;
  },
): OidcRuntime {
  if (oidc.keys !== undefined) {
    return {
      keys: keyRing({ kind: 'host', keys: oidc.keys }, storage, clock),
      algorithms: [...new Set(oidc.keys.map((key) => key.alg!))],
    };
  }
  const source = {
    kind: 'stored' as const,
    store: storage.keys!,
    keySecret: oidc.keySecret!,
    algorithm: oidc.signingAlgorithm,
  };
  const ring = keyRing(source, storage, clock, told.onStale, told.onMade);
  // Keys made before a change of `signingAlgorithm` still sign until rotated: both are announced.
  return {
    keys: { current: () => ring.current().catch(refuseWrongSecret(told.onWrongSecret)) },
    algorithms: SIGNING_ALGORITHMS,
  };
}

/**
 * A wrong `keySecret` found at the first request that needs the keys (the server is built
 * synchronously and reads no storage until then): the operator is told once, naming the option,
 * and the client gets a `server_error` that says the server cannot sign, instead of an
 * unexplained 500. Its description names no option or key: those are for the log.
 */
function refuseWrongSecret(onWrongSecret: (error: KeySecretError) => void) {
  return (err: unknown): never => {
    if (!(err instanceof KeySecretError)) throw err;
    onWrongSecret(err);
    throw new OAuthError(
      'server_error',
      'The server cannot sign ID tokens or publish its keys: its signing keys do not open with its configuration. Its operator is told in the server log.',
      { cause: err, redirectable: false },
    );
  };
}

/** RFC 8414 3: the well-known segment goes between the host and the issuer's path. */
function metadataUrl(issuer: string): string {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}/.well-known/oauth-authorization-server${path}`;
}
