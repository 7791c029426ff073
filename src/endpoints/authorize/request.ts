import {
  clientRedirectUriMatches,
  grantOfResponseType,
  inService,
  pkceRequired,
} from '../../rules/client-kind.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { optionalParam, parseQueryString, rawQuery, safeName, type ParsedParams } from '../../http/params.js';
import type { ConfiguredProvider } from '../../config/server.js';
import { findProvider } from '../../login/providers.js';
import type { PendingAuthorization } from '../../session/state.js';
import type { LoadedClient } from '../../rules/client-kind.js';
import type { Context } from '../shared/pipeline.js';
import { readRows } from '../../storage/read.js';
import type { ClientRecord, GrantRecord } from '../../storage/types.js';
import { DocumentRefusedError, namedClient } from '../shared/document-client.js';
import { clientRequestScopes } from '../../rules/scopes.js';
import { requestedResource } from '../../rules/resources.js';
import { randomId } from '../../crypto/secrets.js';
import { MAX_ID_TOKEN_LENGTH, readIdTokenHint } from '../../oidc/id-token.js';

/** The context of the authorization endpoint and of the steps that resume it. */
export interface AuthorizeContext extends Context {
  /** The query, parsed ({@link parseAuthorizationRequest}). */
  query: ParsedParams;
  /** The `client_id` the request names. */
  clientId: string;
  /** The client, with its metadata document's facts when it was named by one. */
  client: LoadedClient;
  /** The request being authorized: parsed now, or read back from the session. */
  pending: PendingAuthorization;
  /** The configured provider named by `opIdentifier`, if any. */
  provider?: ConfiguredProvider;
  /** The signed-in user's grant at the client, read with it ({@link readClientAndGrant}); `null`: none, or nobody signed in. */
  grant: GrantRecord | null;
  /**
   * What the authorization handed the client, once it did: a code, or a token (the implicit
   * grant). Its trace says so (`grantType`), which the figures count.
   */
  issued?: 'authorization_code' | 'implicit';
}

/**
 * The client a request names and the signed-in user's grant at it, read together (one statement
 * with the SQL adapter's reader), as the token endpoint reads a code with its grant: the
 * authorization's load step. The grant as it is now, revoked or not; nobody signed in, none.
 */
export async function readClientAndGrant(
  ctx: AuthorizeContext,
  clientId: string,
): Promise<ClientRecord | null> {
  const { server, user } = ctx;
  const pair = user === undefined ? {} : { grant: { userId: user.id, clientId } };
  const rows = await readRows(server.storage, { client: clientId, ...pair }, server.clock());
  ctx.grant = rows.grant;
  return rows.client;
}

const pageError = (description: string) =>
  new OAuthError('invalid_request', description, { redirectable: false });

/** Step: parses the query and the client it names (named once). Reads nothing. */
export function parseAuthorizationRequest(ctx: AuthorizeContext): void {
  const params = parseQueryString(rawQuery(ctx.req.originalUrl));
  if (params.repeated.has('client_id')) throw pageError('The parameter client_id must be given once.');
  const clientId = optionalParam(params.values, 'client_id');
  if (clientId === undefined)
    throw pageError('The request names no client application (client_id is missing).');
  ctx.query = params;
  ctx.clientId = clientId;
}

/**
 * Step: the client the request names, registered and enabled, or described by its metadata
 * document ({@link namedClient}), read with the signed-in user's grant at it. A document that cannot be used is an error page that says why,
 * never a redirect: none of its redirect URIs is verified.
 */
export async function loadClient(ctx: AuthorizeContext): Promise<void> {
  const { clientId, req, server } = ctx;
  const stored = await readClientAndGrant(ctx, clientId);
  let client: LoadedClient | null;
  try {
    client = await namedClient(server, clientId, stored, req);
  } catch (err) {
    if (err instanceof DocumentRefusedError) throw pageError(err.message);
    throw err;
  }
  if (!client || client.disabled) throw pageError('The client application is not registered here.');
  if (!inService(client)) throw pageError("This application is waiting for the operator's approval.");
  ctx.client = client;
}

/**
 * Step: validates the request in the order RFC 6749 4.1.2.1 requires: the client and its
 * redirect URI first, reporting problems with them on a page; then everything else, reported to
 * the verified redirect URI. Makes no outbound request.
 */
export function checkAuthorizationRequest(ctx: AuthorizeContext): void {
  const { server, client, query: params } = ctx;
  if (client.grantType === 'device_code') {
    throw new OAuthError(
      'unauthorized_client',
      'This client application uses the device flow: it signs in through the device verification page, not here.',
      { redirectable: false },
    );
  }
  if (client.grantType === 'client_credentials') {
    throw new OAuthError(
      'unauthorized_client',
      'This client application acts as itself (the client credentials grant): no one signs in to it.',
      { redirectable: false },
    );
  }
  const { profile } = server.options;
  const redirectUri = verifiedRedirectUri(client, params, profile);
  const stateParam = params.repeated.has('state') ? null : (params.values.get('state') ?? null);
  ctx.redirectTarget = {
    redirectUri,
    responseType: params.values.get('response_type') === 'token' ? 'token' : 'code',
    state: stateParam === '' ? null : stateParam,
    issuer: server.urls.issuer,
  };

  // RFC 8707 allows resource more than once; it is refused below as invalid_target.
  const repeated = [...params.repeated].find((name) => name !== 'resource');
  if (repeated !== undefined) {
    throw new OAuthError('invalid_request', `The parameter ${safeName(repeated)} must be given once.`);
  }
  const responseType = optionalParam(params.values, 'response_type');
  if (responseType === undefined)
    throw new OAuthError('invalid_request', 'The parameter response_type is required.');
  if (responseType !== 'code' && responseType !== 'token') {
    throw new OAuthError(
      'unsupported_response_type',
      profile === 'oauth2.1' ? 'response_type must be code.' : 'response_type must be code or token.',
    );
  }
  if (responseType === 'token' && profile === 'oauth2.1') {
    // OAuth 2.1: the implicit grant is omitted; a browser app uses the code flow with PKCE.
    throw new OAuthError(
      'unsupported_response_type',
      'This server has no implicit grant (OAuth 2.1): use response_type=code with PKCE.',
    );
  }
  if (client.grantType !== grantOfResponseType(responseType)) {
    throw new OAuthError(
      'unauthorized_client',
      `This client is not registered for response_type=${responseType}.`,
    );
  }
  const state = optionalParam(params.values, 'state') ?? null;
  if (responseType === 'token' && state === null && server.options.requireStateForImplicit) {
    throw new OAuthError('invalid_request', 'The parameter state is required for the implicit grant.');
  }
  const scopes = clientRequestScopes(optionalParam(params.values, 'scope'), client, server.options.scopes);
  const resource = requestedResource(server.resources, client, {
    value: optionalParam(params.values, 'resource'),
    repeated: params.repeated.has('resource'),
  });
  const { codeChallenge, codeChallengeMethod } = parsePkce(params, responseType, client, profile);

  const opIdentifier = optionalParam(params.values, 'opIdentifier');
  const provider = opIdentifier === undefined ? undefined : findProvider(server, opIdentifier);
  if (opIdentifier !== undefined && !provider) {
    throw new OAuthError(
      'invalid_request',
      'The OpenID provider named by opIdentifier is not accepted here.',
      {
        redirectable: false,
      },
    );
  }

  if (provider) ctx.provider = provider;
  const nonce = optionalParam(params.values, 'nonce');
  const { prompt, loginSince } = openIdPrompt(ctx, scopes);
  ctx.pending = {
    kind: 'redirect',
    id: randomId(),
    clientId: client.clientId,
    redirectUri,
    responseType,
    state,
    scopes,
    ...(resource === undefined ? {} : { resource: resource.resource }),
    codeChallenge,
    codeChallengeMethod,
    ...(nonce === undefined ? {} : { nonce }),
    ...(prompt === undefined ? {} : { prompt }),
    ...(loginSince === undefined ? {} : { loginSince }),
    createdAt: server.clock(),
  };
}

/**
 * OpenID Connect's `prompt` and `max_age` (Core 3.1.2.1), for a request of `openid` when OpenID
 * Connect is on (any other request is plain OAuth 2.0, and they are ignored): `none` alone, or
 * any of `login`, `consent`, `select_account` (the selection page is shown anyway); an unknown
 * value or `none` with another is `invalid_request` at the redirect URI.
 */
function openIdPrompt(
  ctx: AuthorizeContext,
  scopes: readonly string[],
): { prompt?: 'none' | 'consent'; loginSince?: number } {
  const { server, query: params } = ctx;
  if (!server.oidc || !scopes.includes('openid')) return {};
  const now = server.clock();
  const values = new Set((optionalParam(params.values, 'prompt') ?? '').split(' ').filter(Boolean));
  for (const value of values) {
    if (!['none', 'login', 'consent', 'select_account'].includes(value)) {
      throw new OAuthError(
        'invalid_request',
        'prompt must be none, or any of login, consent, select_account.',
      );
    }
  }
  if (values.has('none') && values.size > 1) {
    throw new OAuthError('invalid_request', 'prompt=none cannot be combined with another value.');
  }
  const maxAge = optionalParam(params.values, 'max_age');
  if (maxAge !== undefined && !/^\d{1,9}$/.test(maxAge)) {
    throw new OAuthError('invalid_request', 'max_age must be a number of seconds.');
  }
  const since = [
    ...(values.has('login') ? [now] : []),
    ...(maxAge === undefined ? [] : [now - Number(maxAge) * 1000]),
  ];
  return {
    ...(values.has('none')
      ? { prompt: 'none' as const }
      : values.has('consent')
        ? { prompt: 'consent' as const }
        : {}),
    ...(since.length > 0 ? { loginSince: Math.max(...since) } : {}),
  };
}

function verifiedRedirectUri(
  client: LoadedClient,
  params: ParsedParams,
  profile: 'oauth2' | 'oauth2.1',
): string {
  if (params.repeated.has('redirect_uri')) throw pageError('The parameter redirect_uri must be given once.');
  const redirectUri = params.values.get('redirect_uri');
  if (!redirectUri) throw pageError('The request has no redirect_uri.');
  if (!clientRedirectUriMatches(client, redirectUri, profile)) {
    throw pageError('The redirect_uri is not registered for this client application.');
  }
  return redirectUri;
}

function parsePkce(
  params: ParsedParams,
  responseType: 'code' | 'token',
  client: LoadedClient,
  profile: 'oauth2' | 'oauth2.1',
) {
  const codeChallenge = optionalParam(params.values, 'code_challenge') ?? null;
  const method = optionalParam(params.values, 'code_challenge_method');
  if (codeChallenge === null) {
    if (method !== undefined)
      throw new OAuthError('invalid_request', 'code_challenge_method without code_challenge.');
    // RFC 7636 4.4.1: the very error and description a client that requires PKCE expects.
    if (responseType === 'code' && pkceRequired(client, profile))
      throw new OAuthError('invalid_request', 'code challenge required');
    return { codeChallenge, codeChallengeMethod: null };
  }
  if (responseType !== 'code')
    throw new OAuthError('invalid_request', 'PKCE applies to response_type=code only.');
  // RFC 7636 4.2: S256 yields 43 base64url characters. "plain" is refused (RFC 9700 2.1.1).
  if (method !== 'S256') throw new OAuthError('invalid_request', 'code_challenge_method must be S256.');
  if (!/^[A-Za-z0-9_-]{43}$/.test(codeChallenge))
    throw new OAuthError('invalid_request', 'Malformed code_challenge.');
  return { codeChallenge, codeChallengeMethod: 'S256' as const };
}

/**
 * Step: an OpenID Connect request's `id_token_hint` (Core 3.1.2.1), read as the end-session
 * endpoint reads it ({@link readIdTokenHint}: signed by this server, an expired one accepted) and
 * issued to the requesting client: its subject is the only user who counts as signed in for this
 * request, which remembers it through a login. Any other hint is `invalid_request` at the redirect
 * URI. Requests without `openid` ignore the parameter.
 */
export async function checkIdTokenHint(ctx: AuthorizeContext): Promise<void> {
  const { server, query, pending } = ctx;
  if (!server.oidc || !pending.scopes.includes('openid')) return;
  const hint = optionalParam(query.values, 'id_token_hint', MAX_ID_TOKEN_LENGTH);
  if (hint === undefined) return;
  const read = await readIdTokenHint(server, hint);
  // Issued to this very client (as oidc-provider checks it): another client's ID token of a user
  // would let this one ask, with prompt=none, whether that user is the one signed in here.
  if (read === null || read.audience !== pending.clientId) {
    throw new OAuthError(
      'invalid_request',
      'The id_token_hint is not an ID token this server issued to this client.',
    );
  }
  if (pending.kind === 'redirect') ctx.pending = { ...pending, hintSubject: read.subject };
}
