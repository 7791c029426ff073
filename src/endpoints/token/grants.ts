import { clientRedirectUriMatches, isPublicClient } from '../../rules/client-kind.js';
import { DEVICE_CODE_GRANT, pollDevice } from '../../grants/device.js';
import { issueClientToken } from '../../grants/client-credentials.js';
import { clientRequestScopes } from '../../rules/scopes.js';
import { requestedResource } from '../../rules/resources.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { eventContext } from '../../events/emit.js';
import { exchangeCode, refreshAccessToken } from '../../grants/index.js';
import { json } from '../../http/answer.js';
import { idTokenFor } from '../../oidc/id-token.js';
import type { ClientRecord } from '../../storage/types.js';
import { optionalParam, requiredParam } from '../../http/params.js';
import { paramHash, type ClientContext, type NamedRows } from '../shared/client-auth.js';

/** The context of the token endpoint: an authenticated client and the grant type it asked for. */
export interface TokenContext extends ClientContext {
  grantType: GrantType;
}

/**
 * One grant type of the token endpoint, as oidc-provider's `lib/actions/grants/*` are: what the
 * load step reads for it, and one handler over the context that reads the parameters it accepts
 * (strictly parsed and bounded by the form step) and answers with the token response.
 */
export interface GrantType {
  /** The code or token the request names, read with the client (`loadClientRows`). */
  names(ctx: TokenContext): NamedRows;
  handler(ctx: TokenContext): Promise<void>;
}

/** `grant_type=authorization_code` (RFC 6749 4.1.3, RFC 7636 4.5). */
const authorizationCode: GrantType = {
  names: ({ params }) => ({ code: paramHash(params, 'code') }),
  async handler(ctx) {
    const { params } = ctx;
    registeredFor(ctx, 'authorization_code');
    requiredParam(params, 'code');
    const redirectUri = requiredParam(params, 'redirect_uri');
    const codeVerifier = optionalParam(params, 'code_verifier');
    if (codeVerifier !== undefined && !/^[A-Za-z0-9\-._~]{43,128}$/.test(codeVerifier)) {
      throw new OAuthError('invalid_request', 'Malformed code_verifier.');
    }
    const exchange = {
      code: ctx.code!,
      redirectUri,
      codeVerifier,
      resource: optionalParam(params, 'resource'),
      idToken: idTokens(ctx),
    };
    ctx.answer = json(await exchangeCode(ctx.server, ctx.client, exchange, () => eventContext(ctx.req)));
  },
};

/**
 * `grant_type=refresh_token` (RFC 6749 6). RFC 6749 defines no `redirect_uri` for a refresh and
 * client libraries send none, so it is optional; one that is sent is still checked. The service
 * specification lists it: `tokens.requireRedirectUriOnRefresh` makes it required again.
 */
const refreshToken: GrantType = {
  names: ({ params }) => ({ token: paramHash(params, 'refresh_token') }),
  async handler(ctx) {
    const { server, client, params } = ctx;
    registeredFor(ctx, 'authorization_code', 'device_code');
    const presented = requiredParam(params, 'refresh_token');
    // A device client has no redirect URI to repeat.
    const redirectUri =
      server.options.tokens.requireRedirectUriOnRefresh && client.grantType !== 'device_code'
        ? requiredParam(params, 'redirect_uri')
        : optionalParam(params, 'redirect_uri');
    if (redirectUri !== undefined && !clientRedirectUriMatches(client, redirectUri, server.options.profile)) {
      throw new OAuthError('invalid_grant', 'redirect_uri is not registered for this client.');
    }
    const refresh = {
      refreshToken: presented,
      found: ctx.token!,
      scope: optionalParam(params, 'scope'),
      resource: optionalParam(params, 'resource'),
    };
    ctx.answer = json(await refreshAccessToken(server, client, refresh, () => eventContext(ctx.req)));
  },
};

/** `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 3.4). */
const deviceCode: GrantType = {
  names: ({ params }) => ({ device: paramHash(params, 'device_code') }),
  async handler(ctx) {
    registeredFor(ctx, 'device_code');
    requiredParam(ctx.params, 'device_code');
    const poll = {
      rows: ctx.device!,
      resource: optionalParam(ctx.params, 'resource'),
      idToken: idTokens(ctx),
    };
    ctx.answer = json(await pollDevice(ctx.server, ctx.client, poll, () => eventContext(ctx.req)));
  },
};

/**
 * `grant_type=client_credentials` (RFC 6749 4.4.2): a confidential client registered for it gets
 * an access token for itself, for no member: `scope` within its scopes (absent: its default
 * scopes), `resource` as at the authorization endpoint (RFC 8707 2.1), no refresh token.
 */
const clientCredentials: GrantType = {
  names: () => ({}),
  async handler(ctx) {
    const { server, client, params } = ctx;
    registeredFor(ctx, 'client_credentials');
    // RFC 6749 4.4.2: "The client credentials grant type MUST only be used by confidential
    // clients." Registration refuses a public one; an adapter's record is not trusted with it.
    if (isPublicClient(client)) {
      throw new OAuthError('unauthorized_client', 'A public client cannot use the client credentials grant.');
    }
    const scopes = ownScopes(optionalParam(params, 'scope'), client, server.options.scopes);
    const resource = requestedResource(server.resources, client, {
      value: optionalParam(params, 'resource'),
      repeated: false,
    });
    const request = { scopes, ...(resource === undefined ? {} : { resources: [resource.resource] }) };
    ctx.answer = json(await issueClientToken(server, client, request, () => eventContext(ctx.req)));
  },
};

/** The grant types of the token endpoint, keyed by `grant_type`. */
export const grantTypes: Readonly<Record<string, GrantType>> = {
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
  client_credentials: clientCredentials,
  [DEVICE_CODE_GRANT]: deviceCode,
};

/**
 * The scopes of a client's own token: those `scope` names, each registered for the client and
 * offered, or its default scopes without it. `openid` signs a person in and no person is there: it
 * is refused when asked for and left out of the defaults.
 *
 * @throws OAuthError `invalid_scope`
 */
function ownScopes(
  scope: string | undefined,
  client: ClientRecord,
  offered: Readonly<Record<string, string>>,
): string[] {
  const scopes = clientRequestScopes(scope, client, offered);
  if (scope !== undefined && scopes.includes('openid')) {
    throw new OAuthError(
      'invalid_scope',
      'openid signs a person in, and a client acting as itself has none. Refused scope: openid',
    );
  }
  const own = scopes.filter((name) => name !== 'openid');
  if (own.length === 0) {
    throw new OAuthError(
      'invalid_scope',
      'This client has no scope to ask for by itself: name one in scope.',
    );
  }
  return own;
}

/** The ID token of a code exchange or a device poll, made by this server ({@link idTokenFor}). */
function idTokens(ctx: TokenContext) {
  return (subject: Parameters<typeof idTokenFor>[1], scopes: readonly string[], now: number) =>
    idTokenFor(ctx.server, subject, scopes, now);
}

/** A client may use a grant type only if registered for it (RFC 6749 5.2 `unauthorized_client`). */
function registeredFor(ctx: TokenContext, ...grants: ClientRecord['grantType'][]): void {
  if (!grants.includes(ctx.client.grantType)) {
    throw new OAuthError('unauthorized_client', 'This client is not registered for this grant type.');
  }
}
