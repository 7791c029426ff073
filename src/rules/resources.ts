import { OAuthError } from '../errors/oauth-error.js';

/**
 * A resource the server declares (RFC 8707 resource indicators, RFC 9728 protected resource
 * metadata), as the server resolved its `resources` option.
 */
export interface DeclaredResource {
  /** The resource identifier as the host declared it: the audience of its tokens. */
  readonly resource: string;
  /** Shown to people (the metadata's `resource_name`, the consent page). */
  readonly name?: string;
  /** The scopes it knows (the metadata's `scopes_supported`); empty: those the server offers. */
  readonly scopes: readonly string[];
  /** Whether a request that names no resource is for this one. */
  readonly default: boolean;
  /**
   * Where its protected resource metadata is served (RFC 9728 3.1): the well-known segment
   * between the host and the resource's path, `https://host/.well-known/oauth-protected-resource/mcp`.
   */
  readonly metadataUrl: string;
  /** What its access tokens are: opaque, or JWT access tokens (RFC 9068). */
  readonly accessTokenFormat: 'opaque' | 'jwt';
  /** The lifetime of its access tokens in seconds; absent: the server's `tokens.accessTokenTtl`. */
  readonly accessTokenTtl?: number;
}

/** The resources of a server and the one requests without `resource` are for. */
export interface ResourceSet {
  readonly all: readonly DeclaredResource[];
  /** The default resource, if the host named one. */
  readonly fallback?: DeclaredResource;
}

/** The resources of a server that declares none. */
export const NO_RESOURCES: ResourceSet = { all: [] };

/**
 * The identity of a resource URI (RFC 8707 2: an absolute URI without a fragment), or
 * `undefined` for anything else. Two spellings of one URL are one resource: an origin with and
 * without its trailing slash (the MCP SDKs add it), the host's case, a default port.
 */
export function resourceKey(uri: string): string | undefined {
  if (uri.includes('#') || /\s/.test(uri)) return undefined;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  return url.href;
}

/** The resources of the `resources` option, resolved once when the server is built. */
export function declaredResources(
  options: readonly {
    resource: string;
    name?: string;
    scopes?: string[];
    default?: boolean;
    accessTokenFormat?: 'opaque' | 'jwt';
    accessTokenTtl?: number;
  }[],
): ResourceSet {
  const all = options.map((declared): DeclaredResource => ({
    resource: declared.resource,
    ...(declared.name === undefined ? {} : { name: declared.name }),
    scopes: declared.scopes ?? [],
    default: declared.default === true,
    metadataUrl: resourceMetadataUrl(declared.resource),
    accessTokenFormat: declared.accessTokenFormat ?? 'opaque',
    ...(declared.accessTokenTtl === undefined ? {} : { accessTokenTtl: declared.accessTokenTtl }),
  }));
  const fallback = all.find((declared) => declared.default);
  return fallback === undefined ? { all } : { all, fallback };
}

/** The well-known URL of a resource's metadata (RFC 9728 3.1). */
export function resourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}/.well-known/oauth-protected-resource${path}${url.search}`;
}

/** The declared resource `uri` names, whatever its spelling, or `undefined`. */
export function findResource(resources: ResourceSet, uri: string): DeclaredResource | undefined {
  const key = resourceKey(uri);
  return key === undefined
    ? undefined
    : resources.all.find((declared) => resourceKey(declared.resource) === key);
}

const invalidTarget = (description: string) => new OAuthError('invalid_target', description);

/**
 * The resource a request is for (RFC 8707 2): the one its `resource` parameter names, or the
 * default resource when it names none. `undefined` when the server declares no resource (the
 * parameter is then ignored, as before there were any) or names none and has no default.
 *
 * @throws OAuthError `invalid_target` for a malformed or repeated `resource`, one the server does
 *   not declare, or one the client may not ask for.
 */
export function requestedResource(
  resources: ResourceSet,
  client: { resources?: readonly string[] },
  param: { value: string | undefined; repeated: boolean },
): DeclaredResource | undefined {
  if (resources.all.length === 0) return undefined;
  if (param.repeated) {
    throw invalidTarget('This server issues a token for one resource at a time: give resource once.');
  }
  if (param.value === undefined) {
    if (resources.fallback && !clientMayUse(client, resources.fallback)) {
      throw invalidTarget('This client application must name the resource it asks for (resource).');
    }
    return resources.fallback;
  }
  if (resourceKey(param.value) === undefined) {
    throw invalidTarget('resource must be an absolute URI without a fragment.');
  }
  const declared = findResource(resources, param.value);
  if (declared === undefined) throw invalidTarget('The resource is not one this server issues tokens for.');
  if (!clientMayUse(client, declared)) {
    throw invalidTarget('This client application may not ask for tokens for this resource.');
  }
  return declared;
}

/** Whether a client may ask for tokens for `declared`: every declared resource unless it lists some. */
export function clientMayUse(client: { resources?: readonly string[] }, declared: DeclaredResource): boolean {
  const allowed = client.resources;
  if (allowed === undefined || allowed.length === 0) return true;
  const key = resourceKey(declared.resource);
  return allowed.some((uri) => resourceKey(uri) === key);
}

/**
 * The resources a token request (a code exchange, a refresh) may bind its access token to, given
 * what the server still declares, what the client may still use, and what was granted (`granted`: the code's or the refresh token's resources; none granted means the
 * default one, as for a request that named none): the one its `resource` names, which must be
 * among them (RFC 8707 2.2: narrower, never wider), or all of them.
 *
 * @throws OAuthError `invalid_target` for a malformed or repeated `resource` or one not granted.
 */
export function narrowedResources(
  resources: ResourceSet,
  client: { resources?: readonly string[] },
  granted: readonly string[],
  param: { value: string | undefined; repeated: boolean },
): string[] {
  if (resources.all.length === 0) return [...granted];
  const named = granted.length > 0 ? granted : resources.fallback ? [resources.fallback.resource] : [];
  // What the host still declares and the client may still use: a resource taken from either
  // mints no new token, as a scope taken back does not.
  const standing = named.filter((uri) => {
    const declared = findResource(resources, uri);
    return declared !== undefined && clientMayUse(client, declared);
  });
  if (named.length > 0 && standing.length === 0) {
    throw invalidTarget('The resource of this authorization is no longer offered to this client.');
  }
  if (param.repeated) {
    throw invalidTarget('This server issues a token for one resource at a time: give resource once.');
  }
  if (param.value === undefined) return [...standing];
  const key = resourceKey(param.value);
  if (key === undefined) throw invalidTarget('resource must be an absolute URI without a fragment.');
  const match = standing.find((uri) => resourceKey(uri) === key);
  if (match === undefined) {
    throw invalidTarget('The resource was not granted to this client in this authorization.');
  }
  return [match];
}
