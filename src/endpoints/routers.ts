import type { RequestHandler } from 'express';
import { handle, type Endpoint } from './shared/pipeline.js';
import { routeTable, type Route } from '../http/routes.js';
import type { AuthorizationServer } from '../config/server.js';
import { applicationsEndpoint, revokeApplicationEndpoint } from './applications/endpoint.js';
import { authorizeEndpoint, resumeEndpoint } from './authorize/endpoint.js';
import { consentEndpoint } from './authorize/decision.js';
import { rootResource } from './discovery/root.js';
import { metadataHandler, wellKnownRoutes, type MetadataOptions } from './discovery/metadata.js';
import { introspectionEndpoint, type IntrospectionRouterOptions } from './introspection/endpoint.js';
import { callbackEndpoint, loginEndpoint } from './login/endpoint.js';
import { logoutEndpoint } from './logout/endpoint.js';
import { endSessionEndpoint } from './oidc/end-session.js';
import { jwksEndpoint } from './oidc/jwks.js';
import { userinfoHandler } from './oidc/userinfo.js';
import { revocationEndpoint } from './revocation/endpoint.js';
import { tokenEndpoint } from './token/endpoint.js';
import { deviceAuthorizationEndpoint } from './device/authorization.js';
import { deviceEntryEndpoint, deviceSubmitEndpoint } from './authorize/device.js';
import { registrationEndpoint } from './registration/endpoint.js';
import {
  appEndpoint,
  createAppEndpoint,
  deleteAppEndpoint,
  developersEndpoint,
  newAppEndpoint,
  rotateAppEndpoint,
  updateAppEndpoint,
} from './developers/endpoint.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each endpoint has its own context
type AnyEndpoint = Endpoint<any>;

/** The endpoints' routes: the pipeline of each, under its path and method. */
function routesOf(server: AuthorizationServer, endpoints: readonly AnyEndpoint[]): Route[] {
  return endpoints.map((definition) => ({
    path: definition.path,
    // JSON endpoints answer every method (others with `invalid_request`); pages their own.
    method: definition.kind === 'json' ? 'ALL' : definition.method,
    handler: handle(server, definition),
  }));
}

function oauthRoutes(server: AuthorizationServer, endpoints: readonly AnyEndpoint[]): RequestHandler {
  return mounted(server, routeTable(routesOf(server, endpoints)));
}

/**
 * Says once, in the log, when the routes are mounted elsewhere than at the path of `baseUrl`:
 * every URL the library hands out would then lead nowhere. Only said, not refused: a proxy may
 * strip the path before the app sees it.
 */
function mounted(server: AuthorizationServer, routes: RequestHandler): RequestHandler {
  const mountPath = new URL(`${server.urls.base}/`).pathname.replace(/\/$/, '');
  let checked = false;
  return (req, res, next) => {
    if (!checked) {
      checked = true;
      if (req.baseUrl !== mountPath) {
        server.logger.warn(
          `the routers are mounted at "${req.baseUrl || '/'}", but baseUrl ${server.urls.base} puts the endpoints under "${mountPath || '/'}": mount them with app.use(${JSON.stringify(mountPath || '/')}, …), or change baseUrl (unless a proxy strips that path)`,
        );
      }
    }
    routes(req, res, next);
  };
}

const browserEndpoints = [
  authorizeEndpoint,
  resumeEndpoint,
  consentEndpoint,
  loginEndpoint,
  callbackEndpoint,
  logoutEndpoint,
  deviceEntryEndpoint,
  deviceSubmitEndpoint,
];

/**
 * The authorization endpoint (RFC 6749 3.1) and the browser pages around it: provider selection,
 * OpenID 2.0 login, consent, sign-out. Mount it at the path of `baseUrl`.
 *
 * Routes: `GET /oauth/authorize`, `GET /oauth/authorize/resume`, `POST /oauth/authorize/decision`,
 * `GET /oauth/login`, `GET /oauth/login/callback`, `POST /oauth/logout`, the device verification
 * page `GET`/`POST /oauth/device` (RFC 8628); with OpenID Connect on,
 * `GET /oauth/end-session` (RP-initiated logout).
 *
 * @example
 * app.use(authorizeRouter(server));
 */
export function authorizeRouter(server: AuthorizationServer): RequestHandler {
  return oauthRoutes(server, browserEndpointsOf(server));
}

/** The browser's endpoints, with OpenID Connect's end-session endpoint when it is on. */
function browserEndpointsOf(server: AuthorizationServer): AnyEndpoint[] {
  return server.oidc ? [...browserEndpoints, endSessionEndpoint] : browserEndpoints;
}

/**
 * The token endpoint (RFC 6749 3.2): `POST /oauth/token`, the device authorization endpoint
 * (RFC 8628 3.1): `POST /oauth/device_authorization`, with OpenID Connect on the UserInfo
 * endpoint (`GET`/`POST /oauth/userinfo`), and with `dynamicRegistration` on the client
 * registration endpoint (RFC 7591): `POST /oauth/register`. Mount it at the path of `baseUrl`.
 *
 * @example
 * app.use(tokenRouter(server));
 */
export function tokenRouter(server: AuthorizationServer): RequestHandler {
  const endpoints = [tokenEndpoint, deviceAuthorizationEndpoint, ...registrationEndpoints(server)];
  return mounted(server, routeTable([...routesOf(server, endpoints), ...oidcApiRoutes(server)]));
}

/** With `dynamicRegistration` on, the client registration endpoint; otherwise no route at all. */
function registrationEndpoints(server: AuthorizationServer): AnyEndpoint[] {
  return server.options.dynamicRegistration === false ? [] : [registrationEndpoint];
}

/** With OpenID Connect on, the UserInfo endpoint (GET and POST), served with the token endpoint. */
function oidcApiRoutes(server: AuthorizationServer): Route[] {
  if (!server.oidc) return [];
  return [{ path: '/oauth/userinfo', method: 'ALL', handler: userinfoHandler(server) }];
}

/**
 * The token revocation endpoint (RFC 7009): `POST /oauth/revoke`, as `oauthRouter` mounts it
 * (`revocation: false` leaves it out). Not exported from the package.
 *
 * @internal
 */
export function revocationRouter(server: AuthorizationServer): RequestHandler {
  return oauthRoutes(server, [revocationEndpoint]);
}

/**
 * The token introspection endpoint (RFC 7662): `POST /oauth/introspect`, as `oauthRouter` mounts it
 * (`introspection: false` leaves it out; `resourceServers` is an option of `oauthRouter`). Not
 * exported from the package.
 *
 * @internal
 */
export function introspectionRouter(
  server: AuthorizationServer,
  options: IntrospectionRouterOptions = {},
): RequestHandler {
  return oauthRoutes(server, [introspectionEndpoint(options)]);
}

/**
 * The end user's authorized-applications page: `GET /oauth/applications` and
 * `POST /oauth/applications/revoke`, as `oauthRouter` mounts it (`applications: false` leaves it
 * out). Not exported from the package.
 *
 * @internal
 */
export function applicationsRouter(server: AuthorizationServer): RequestHandler {
  return oauthRoutes(server, [applicationsEndpoint, revokeApplicationEndpoint]);
}

/**
 * The developer page, where signed-in members register their own applications: `GET /developers`
 * (their applications), `GET`/`POST /developers/new` (create one; a confidential one's secret is
 * shown once), `GET /developers/app?client_id=…` and `POST /developers/app/update`, `/rotate`,
 * `/delete`. Members sign in as they do to authorize (a provider, or the host's own login through
 * `authenticatedAccount`). Off until mounted; its limits are the server's `developerApps` option.
 * Mount it at the path of `baseUrl`. Needs the storage's operator methods (`clients.create`,
 * `list`, `update`, `remove`). See docs/developer-page.md.
 *
 * @example
 * app.use(developerRouter(server));
 */
export function developerRouter(server: AuthorizationServer): RequestHandler {
  const missing = (['create', 'list', 'update', 'remove'] as const).filter(
    (name) => typeof server.storage.clients[name] !== 'function',
  );
  if (missing.length) {
    throw new TypeError(
      `openid-oauth-bridge: developerRouter: the storage has no ${missing.map((name) => `clients.${name}`).join(', ')}, which members' applications are written with; use a built-in adapter or add them to yours (docs/storage.md)`,
    );
  }
  return oauthRoutes(server, [
    developersEndpoint,
    newAppEndpoint,
    createAppEndpoint,
    appEndpoint,
    updateAppEndpoint,
    rotateAppEndpoint,
    deleteAppEndpoint,
  ]);
}

/**
 * Serves the root resource at `GET /` of its mount point:
 * `{"oauth":{"authorization":{"href":...},"token":{"href":...}}}`, and the authorization server
 * metadata (RFC 8414) at `GET /.well-known/oauth-authorization-server` followed by the path of
 * `baseUrl`: the right place when the router is mounted at the origin root. Otherwise mount
 * `metadataRouter` there. URLs come from `baseUrl`, never from the request's `Host` header. With
 * OpenID Connect on, also `GET /.well-known/openid-configuration` (the same document) and the
 * signing keys at `GET /oauth/jwks`; mount it at the path of `baseUrl` for those.
 *
 * @example
 * app.use(discoveryRouter(server));
 */
export function discoveryRouter(server: AuthorizationServer, options: MetadataOptions = {}): RequestHandler {
  return routeTable(discoveryRoutes(server, options));
}

function discoveryRoutes(server: AuthorizationServer, options: MetadataOptions): Route[] {
  const routes: Route[] = [
    { path: '/', method: 'GET', handler: rootResource(server) },
    ...wellKnownRoutes(server, options),
  ];
  if (server.oidc) {
    routes.push(
      { path: '/.well-known/openid-configuration', method: 'GET', handler: metadataHandler(server, options) },
      ...routesOf(server, [jwksEndpoint]),
    );
  }
  return routes;
}

/**
 * What {@link oauthRouter} mounts: every endpoint by default; each optional one can be left out,
 * and the metadata then leaves out its URL.
 *
 * @example
 * app.use(oauthRouter(server, { introspection: false }));
 */
export interface OAuthRouterOptions extends MetadataOptions, IntrospectionRouterOptions {
  /**
   * Serve the root resource at `GET /` of the mount point, and the metadata when mounted at the
   * origin root (`discoveryRouter`). Default `true`; set `false` when your app answers `GET /`
   * itself, and mount `discoveryRouter` where your clients expect it.
   */
  discovery?: boolean;
  /** Serve the signed-in user's authorized applications (`/oauth/applications`). Default `true`. */
  applications?: boolean;
  /** `revocation: false` leaves out the revocation endpoint (RFC 7009), and its URL from the metadata. */
  revocation?: boolean;
  /** `introspection: false` leaves out the introspection endpoint (RFC 7662), and its URL from the metadata. */
  introspection?: boolean;
}

/**
 * Every endpoint of the authorization server in one router: those of `authorizeRouter`,
 * `tokenRouter` (with dynamic client registration, RFC 7591, when `dynamicRegistration` is on) and
 * `discoveryRouter`, revocation (RFC 7009), introspection (RFC 7662) and the
 * authorized-applications page. Mount it at the path of `baseUrl`, in front of your own routes.
 *
 * @example
 * app.use(oauthRouter(server));
 * app.get('/v1/realms', requireBearer(server), (req, res) => res.json({ user: bearerOf(res).userId }));
 */
export function oauthRouter(server: AuthorizationServer, options: OAuthRouterOptions = {}): RequestHandler {
  const { discovery = true, applications = true, revocation = true, introspection = true } = options;
  const endpoints: AnyEndpoint[] = [
    tokenEndpoint,
    deviceAuthorizationEndpoint,
    ...registrationEndpoints(server),
    ...browserEndpointsOf(server),
  ];
  if (revocation) endpoints.push(revocationEndpoint);
  if (introspection) endpoints.push(introspectionEndpoint(options));
  if (applications) endpoints.push(applicationsEndpoint, revokeApplicationEndpoint);
  const routes = [...routesOf(server, endpoints), ...oidcApiRoutes(server)];
  if (discovery) routes.push(...discoveryRoutes(server, options));
  return mounted(server, routeTable(routes));
}
