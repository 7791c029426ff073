import { Router } from 'express';
import { handle, type Endpoint } from '../http/pipeline.js';
import type { AuthorizationServer } from '../server.js';
import { applicationsEndpoint, revokeApplicationEndpoint } from './applications/endpoint.js';
import { authorizeEndpoint, resumeEndpoint } from './authorize/endpoint.js';
import { consentEndpoint } from './consent/endpoint.js';
import { rootResource } from './discovery/root.js';
import { metadataHandler, type MetadataOptions } from './discovery/metadata.js';
import { introspectionEndpoint, type IntrospectionRouterOptions } from './introspection/endpoint.js';
import { callbackEndpoint, loginEndpoint } from './login/endpoint.js';
import { logoutEndpoint } from './logout/endpoint.js';
import { revocationEndpoint } from './revocation/endpoint.js';
import { tokenEndpoint } from './token/endpoint.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each endpoint has its own context
type AnyEndpoint = Endpoint<any>;

/**
 * A router for endpoints under `/oauth`: one Express route each, under one `/oauth` mount, so a
 * request for any other path of the host's app is handed on after one look at its path.
 */
function oauthRoutes(server: AuthorizationServer, endpoints: readonly AnyEndpoint[]): Router {
  const routes = Router();
  for (const definition of endpoints) {
    const path = definition.path.slice('/oauth'.length);
    const handler = handle(server, definition);
    // JSON endpoints answer every method (others with `invalid_request`); pages their own.
    if (definition.kind === 'json') routes.all(path, handler);
    else if (definition.method === 'GET') routes.get(path, handler);
    else routes.post(path, handler);
  }
  const router = Router();
  router.use('/oauth', routes);
  return router;
}

const browserEndpoints = [
  authorizeEndpoint,
  resumeEndpoint,
  consentEndpoint,
  loginEndpoint,
  callbackEndpoint,
  logoutEndpoint,
];

/**
 * The authorization endpoint (RFC 6749 3.1) and the browser pages around it: provider selection,
 * OpenID 2.0 login, consent, sign-out. Mount it at the path of `baseUrl`.
 *
 * Routes: `GET /oauth/authorize`, `GET /oauth/authorize/resume`, `POST /oauth/authorize/decision`,
 * `GET /oauth/login`, `GET /oauth/login/callback`, `POST /oauth/logout`.
 *
 * @example
 * app.use(authorizeRouter(server));
 */
export function authorizeRouter(server: AuthorizationServer): Router {
  return oauthRoutes(server, browserEndpoints);
}

/**
 * The token endpoint (RFC 6749 3.2): `POST /oauth/token`. Mount it at the path of `baseUrl`.
 *
 * @example
 * app.use(tokenRouter(server));
 */
export function tokenRouter(server: AuthorizationServer): Router {
  return oauthRoutes(server, [tokenEndpoint]);
}

/**
 * The token revocation endpoint (RFC 7009): `POST /oauth/revoke`. Mount it at the path of
 * `baseUrl`.
 *
 * @example
 * app.use(revocationRouter(server));
 */
export function revocationRouter(server: AuthorizationServer): Router {
  return oauthRoutes(server, [revocationEndpoint]);
}

/**
 * The token introspection endpoint (RFC 7662): `POST /oauth/introspect`. Mount it at the path of
 * `baseUrl`.
 *
 * @example
 * app.use(introspectionRouter(server, { resourceServers: ['realms-api'] }));
 */
export function introspectionRouter(
  server: AuthorizationServer,
  options: IntrospectionRouterOptions = {},
): Router {
  return oauthRoutes(server, [introspectionEndpoint(options)]);
}

/**
 * The end user's authorized-applications page: `GET /oauth/applications` and
 * `POST /oauth/applications/revoke`. Mount it at the path of `baseUrl`, like `authorizeRouter`;
 * link to it from your app's account settings.
 *
 * @example
 * app.use(applicationsRouter(server));
 */
export function applicationsRouter(server: AuthorizationServer): Router {
  return oauthRoutes(server, [applicationsEndpoint, revokeApplicationEndpoint]);
}

/**
 * Serves the root resource at `GET /` of its mount point:
 * `{"oauth":{"authorization":{"href":...},"token":{"href":...}}}`, and the authorization server
 * metadata (RFC 8414) at `GET /.well-known/oauth-authorization-server` followed by the path of
 * `baseUrl`: the right place when the router is mounted at the origin root. Otherwise mount
 * `metadataRouter` there. URLs come from `baseUrl`, never from the request's `Host` header.
 *
 * @example
 * app.use(discoveryRouter(server));
 */
export function discoveryRouter(server: AuthorizationServer, options: MetadataOptions = {}): Router {
  const router = Router();
  router.get('/', rootResource(server));
  router.use(metadataHandler(server, options));
  return router;
}

export interface OAuthRouterOptions extends MetadataOptions, IntrospectionRouterOptions {
  /**
   * Serve the root resource at `GET /` of the mount point, and the metadata when mounted at the
   * origin root (`discoveryRouter`). Default `true`; set `false` when your app answers `GET /`
   * itself, and mount `discoveryRouter` where your clients expect it.
   */
  discovery?: boolean;
  /** Serve the signed-in user's authorized applications (`applicationsRouter`). Default `true`. */
  applications?: boolean;
  /** `revocation: false` leaves out `revocationRouter`, and its URL from the metadata. */
  revocation?: boolean;
  /** `introspection: false` leaves out `introspectionRouter`, and its URL from the metadata. */
  introspection?: boolean;
}

/**
 * Every endpoint of the authorization server in one router: those of `authorizeRouter`,
 * `tokenRouter`, `discoveryRouter`, `revocationRouter`, `introspectionRouter` and
 * `applicationsRouter`. Mount it at the path of `baseUrl`, in front of your own routes.
 *
 * @example
 * app.use(oauthRouter(server));
 * app.get('/v1/realms', requireBearer(server), (req, res) => res.json(realmsOf(bearerOf(res).userId)));
 */
export function oauthRouter(server: AuthorizationServer, options: OAuthRouterOptions = {}): Router {
  const { discovery = true, applications = true, revocation = true, introspection = true } = options;
  const endpoints: AnyEndpoint[] = [tokenEndpoint, ...browserEndpoints];
  if (revocation) endpoints.push(revocationEndpoint);
  if (introspection) endpoints.push(introspectionEndpoint(options));
  if (applications) endpoints.push(applicationsEndpoint, revokeApplicationEndpoint);
  const router = oauthRoutes(server, endpoints);
  if (discovery) router.use(discoveryRouter(server, options));
  return router;
}
