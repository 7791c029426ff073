import type { RequestHandler } from 'express';
import { routeTable, type Route } from '../../http/routes.js';
import type { DeclaredResource } from '../../rules/resources.js';
import type { AuthorizationServer } from '../../config/server.js';
import { DEVICE_CODE_GRANT } from '../../grants/device.js';
import { SCOPE_CLAIMS } from '../../oidc/id-token.js';

/** Options of the metadata document, shared by {@link discoveryRouter} and {@link metadataRouter}. */
export interface MetadataOptions {
  /** Advertise `revocation_endpoint` (`oauthRouter` serves it unless `revocation: false`). Default `true`. */
  revocation?: boolean;
  /** Advertise `introspection_endpoint` (`oauthRouter` serves it unless `introspection: false`). Default `true`. */
  introspection?: boolean;
  /** An absolute http(s) URL of documentation for developers of client applications. */
  serviceDocumentation?: string;
}

/** Authorization server metadata (RFC 8414 2), as this library fills it in. */
export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  /** RFC 8628 4. */
  device_authorization_endpoint: string;
  /** RFC 8414 2, RFC 7591 3: with `dynamicRegistration` on. */
  registration_endpoint?: string;
  revocation_endpoint?: string;
  revocation_endpoint_auth_methods_supported?: string[];
  introspection_endpoint?: string;
  introspection_endpoint_auth_methods_supported?: string[];
  scopes_supported?: string[];
  response_types_supported: string[];
  response_modes_supported: string[];
  grant_types_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  code_challenge_methods_supported: string[];
  authorization_response_iss_parameter_supported: true;
  /** draft-ietf-oauth-client-id-metadata-document, when `clientMetadataDocuments` is on. */
  client_id_metadata_document_supported?: true;
  service_documentation?: string;
  /** OpenID Connect Discovery 1.0 section 3, when OpenID Connect is on. */
  jwks_uri?: string;
  userinfo_endpoint?: string;
  end_session_endpoint?: string;
  subject_types_supported?: string[];
  id_token_signing_alg_values_supported?: string[];
  claims_supported?: string[];
  claims_parameter_supported?: false;
  request_parameter_supported?: false;
  request_uri_parameter_supported?: false;
}

/** The claims an ID token or the UserInfo endpoint may carry: the issuer's, and those scopes release. */
export const CLAIMS_SUPPORTED = [
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'azp',
  ...Object.values(SCOPE_CLAIMS).flat(),
];

/**
 * RFC 6749 2.3.1, both ways the token endpoint accepts a secret, and `none`: a public client
 * names itself with `client_id` alone (RFC 8414 2 / IANA names).
 */
const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];
/** Introspection is for confidential clients (resource servers) only. */
const INTROSPECTION_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'];

/**
 * The metadata document (RFC 8414 2) of the server: every URL absolute and built from `baseUrl`,
 * the issuer being `baseUrl` itself. With OpenID Connect on, the same document is the provider
 * configuration (OpenID Connect Discovery 1.0 section 3) too: one source for both, so they agree
 * on every field they share.
 *
 * @see RFC 8414 section 2, RFC 9207 section 3, OpenID Connect Discovery 1.0 section 3
 */
export function authorizationServerMetadata(
  server: AuthorizationServer,
  options: MetadataOptions = {},
): AuthorizationServerMetadata {
  const { urls } = server;
  const scopes = Object.keys(server.options.scopes);
  const documentation = checkDocumentationUrl(options.serviceDocumentation);
  // OAuth 2.1 has no implicit grant: no `token` response type, no fragment response mode.
  const implicit = server.options.profile !== 'oauth2.1';
  return {
    issuer: urls.issuer,
    authorization_endpoint: urls.authorization,
    token_endpoint: urls.token,
    device_authorization_endpoint: urls.deviceAuthorization,
    ...(server.options.dynamicRegistration === false ? {} : { registration_endpoint: urls.registration }),
    ...(options.revocation === false
      ? {}
      : {
          revocation_endpoint: urls.revocation,
          revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
        }),
    ...(options.introspection === false
      ? {}
      : {
          introspection_endpoint: urls.introspection,
          introspection_endpoint_auth_methods_supported: INTROSPECTION_AUTH_METHODS,
        }),
    // Only the operator's configured scopes: clients may be registered with others of their own.
    ...(scopes.length ? { scopes_supported: scopes } : {}),
    response_types_supported: implicit ? ['code', 'token'] : ['code'],
    response_modes_supported: implicit ? ['query', 'fragment'] : ['query'],
    grant_types_supported: [
      'authorization_code',
      ...(implicit ? ['implicit'] : []),
      'refresh_token',
      'client_credentials',
      DEVICE_CODE_GRANT,
    ],
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    ...(server.clientDocuments ? { client_id_metadata_document_supported: true as const } : {}),
    ...(documentation === undefined ? {} : { service_documentation: documentation }),
    ...(server.oidc
      ? {
          jwks_uri: urls.jwks,
          userinfo_endpoint: urls.userinfo,
          end_session_endpoint: urls.endSession,
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: [...server.oidc.algorithms],
          claims_supported: CLAIMS_SUPPORTED,
          claims_parameter_supported: false,
          request_parameter_supported: false,
          request_uri_parameter_supported: false,
        }
      : {}),
  };
}

/**
 * The path of the metadata document relative to the origin (RFC 8414 3): the well-known segment
 * goes between the host and the issuer's path, so issuer `https://example.com/auth` has its
 * metadata at `/.well-known/oauth-authorization-server/auth`.
 */
export function metadataPath(server: AuthorizationServer): string {
  return new URL(server.urls.metadata).pathname;
}

/** Answers the metadata document: public, cacheable, readable from any origin. Built once. */
export function metadataHandler(server: AuthorizationServer, options: MetadataOptions = {}): RequestHandler {
  return publicJson(authorizationServerMetadata(server, options));
}

/** Answers a document: public, cacheable, readable from any origin. Serialized once. */
function publicJson(document: object): RequestHandler {
  const json = JSON.stringify(document);
  return (_req, res) => {
    res
      .set({ 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' })
      .type('json')
      .send(json);
  };
}

/** Protected resource metadata (RFC 9728 2), as this library fills it in. */
export interface ProtectedResourceMetadata {
  resource: string;
  /** The issuer, byte for byte as the authorization server metadata says it. */
  authorization_servers: [string];
  scopes_supported?: string[];
  bearer_methods_supported: ['header'];
  resource_name?: string;
}

/**
 * The metadata of a declared resource (RFC 9728 2): this server is its one authorization server,
 * bearer tokens go in the `Authorization` header only (as `requireBearer` takes them), and its
 * scopes are those declared for it, else those the server offers.
 */
export function protectedResourceMetadata(
  server: AuthorizationServer,
  declared: DeclaredResource,
): ProtectedResourceMetadata {
  const scopes = declared.scopes.length ? [...declared.scopes] : Object.keys(server.options.scopes);
  return {
    resource: declared.resource,
    authorization_servers: [server.urls.issuer],
    ...(scopes.length ? { scopes_supported: scopes } : {}),
    bearer_methods_supported: ['header'],
    ...(declared.name === undefined ? {} : { resource_name: declared.name }),
  };
}

/**
 * The documents served at well-known paths of the origin: the authorization server metadata (RFC
 * 8414 3) and, for an issuer with a path, its OpenID Connect form with the path inserted as the
 * MCP authorization spec looks for it; and the metadata of every declared resource at this
 * origin (RFC 9728 3.1). A resource at another origin has its metadata served there.
 */
export function wellKnownRoutes(server: AuthorizationServer, options: MetadataOptions = {}): Route[] {
  const handler = metadataHandler(server, options);
  const issuerPath = new URL(server.urls.issuer).pathname.replace(/\/$/, '');
  const routes: Route[] = [{ path: metadataPath(server), method: 'GET', handler }];
  if (server.oidc && issuerPath !== '') {
    routes.push({ path: `/.well-known/openid-configuration${issuerPath}`, method: 'GET', handler });
  }
  for (const declared of server.resources.all) {
    const url = new URL(declared.metadataUrl);
    if (url.origin !== server.urls.origin) continue;
    routes.push({
      path: url.pathname,
      method: 'GET',
      handler: publicJson(protectedResourceMetadata(server, declared)),
    });
  }
  return routes;
}

/**
 * Serves the metadata document (RFC 8414 3) at `GET /.well-known/oauth-authorization-server`
 * followed by the issuer's path (and, with OpenID Connect on, at
 * `/.well-known/openid-configuration` followed by it), and the protected resource metadata (RFC
 * 9728) of every declared resource at this origin, at `/.well-known/oauth-protected-resource`
 * followed by the resource's path. **Mount it at the origin root**
 * (`app.use(metadataRouter(server))`), whatever the path of `baseUrl`: that is where RFC 8414 and
 * RFC 9728 clients look. `discoveryRouter` serves the same documents when it is itself mounted at
 * the origin root.
 *
 * @example
 * // baseUrl: 'https://example.com/auth'
 * app.use(metadataRouter(server)); // GET /.well-known/oauth-authorization-server/auth
 * app.use('/auth', discoveryRouter(server), authorizeRouter(server), tokenRouter(server));
 *
 * @see RFC 8414 section 3, RFC 9728 section 3
 */
export function metadataRouter(server: AuthorizationServer, options: MetadataOptions = {}): RequestHandler {
  return routeTable(wellKnownRoutes(server, options));
}

function checkDocumentationUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new TypeError(
      'openid-oauth-bridge: invalid options\n  serviceDocumentation: must be an absolute http(s) URL',
    );
  }
  return url;
}
