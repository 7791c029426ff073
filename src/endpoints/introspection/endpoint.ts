import { teamsOf } from '../../grants/teams.js';
import { releases } from '../../oidc/id-token.js';
import { currentScopes, tokenSubject, usable } from '../../grants/tokens.js';
import { json } from '../../http/answer.js';
import { readClientForm } from '../shared/form.js';
import { optionalParam, requiredParam } from '../../http/params.js';
import { endpoint, type Endpoint } from '../shared/pipeline.js';
import type { AuthorizationServer } from '../../config/server.js';
import type { FoundTokenRecord } from '../../storage/types.js';
import { accessTokenVerifier, looksLikeJwt } from '../../oidc/access-token.js';
import {
  authenticateClient,
  limitFailures,
  loadClientRows,
  paramHash,
  type ClientContext,
} from '../shared/client-auth.js';

export interface IntrospectionRouterOptions {
  /**
   * The `client_id`s of resource servers that may introspect every token. They are registered
   * like code clients (`registerClient`; their `redirectUri` is never used) and authenticate
   * with their secret. Every other code client may introspect only the tokens issued to it.
   * Default: none.
   */
  resourceServers?: readonly string[];
}

/** The RFC 7662 2.2 answer. */
export type IntrospectionResponse =
  | { active: false }
  | {
      active: true;
      /** Space-separated; absent when the token has no scope. */
      scope?: string;
      client_id: string;
      /** `Bearer` for an access token; absent for a refresh token. */
      token_type?: 'Bearer';
      /** Seconds since the epoch; absent for a refresh token without expiry. */
      exp?: number;
      iat: number;
      /**
       * The library's id of the user (the host's account id with `accounts`), the same for every
       * client; for a client's own token (client credentials), its `client_id`.
       */
      sub: string;
      /**
       * Whom the token speaks for (an extension member, RFC 7662 2.2): `user`, a member who
       * authorized the client, or `client`, the client itself, for no member (client credentials).
       */
      subject_kind: 'user' | 'client';
      iss: string;
      /** The resource (RFC 8707) the token is for, or the resources when several; absent: none. */
      aud?: string | string[];
      /** The user's teams as of their latest login (Launchpad's teams extension); absent when none. */
      groups?: string[];
    };

const INACTIVE: IntrospectionResponse = { active: false };

/**
 * The token introspection endpoint (RFC 7662): `POST /oauth/introspect` with `token` and an
 * optional `token_type_hint` in an `application/x-www-form-urlencoded` body, for resource servers
 * that run in other processes. The caller authenticates as a client does at the token endpoint.
 *
 * Who may see what (RFC 7662 section 4): a client sees only the tokens issued to it, and the
 * `resourceServers` see every token. Anything else, like an unknown, expired, revoked or
 * rotated-away token, or one of a disabled or removed client, is `{ "active": false }`, so the
 * answer never tells a caller that a token it may not see exists.
 *
 * @see RFC 7662 sections 2.1, 2.2, 2.3, 4
 */
export function introspectionEndpoint(options: IntrospectionRouterOptions = {}): Endpoint<ClientContext> {
  const resourceServers = new Set(checkResourceServers(options.resourceServers));
  let verify: ReturnType<typeof accessTokenVerifier> | undefined;
  return endpoint<ClientContext>({
    name: 'introspection',
    method: 'POST',
    path: '/oauth/introspect',
    kind: 'json',
    steps: [
      readClientForm('8kb', 10),
      loadClientRows(({ params }) => ({ token: paramHash(params, 'token') })),
      authenticateClient,
      limitFailures,
      async function introspect(ctx) {
        const { server, params, client } = ctx;
        requiredParam(params, 'token');
        // RFC 7662 2.1: the hint is advisory; one lookup finds either kind.
        optionalParam(params, 'token_type_hint');
        const found = ctx.token!;
        const visible =
          found !== null &&
          (found.token.clientId === client.clientId || resourceServers.has(client.clientId));
        let answer = visible ? describe(server, found) : INACTIVE;
        // A JWT access token is active only while requireBearer would take it: its signature's
        // key still published, its claims this server's (RFC 9068 4, at any resource).
        if (answer.active && looksLikeJwt(params.get('token')!)) {
          verify ??= accessTokenVerifier(server, server.clock);
          if (!(await verify(params.get('token')!, undefined))) answer = INACTIVE;
        }
        if (!answer.active) {
          ctx.answer = json(answer);
          return;
        }
        // The user's teams, for the resource server (an extension member, RFC 7662 2.2), when
        // the token was granted `profile`, as ID tokens and UserInfo release them.
        // A client's own token has no member, and no teams.
        const released = answer.subject_kind === 'user' && releases(answer.scope?.split(' ') ?? [], 'groups');
        const groups = released ? await teamsOf(server, answer.sub) : [];
        ctx.answer = json(groups.length > 0 ? { ...answer, groups } : answer);
      },
    ],
  });
}

/** Active exactly when `requireBearer` would accept the access token (or a refresh would work). */
function describe(server: AuthorizationServer, found: FoundTokenRecord): IntrospectionResponse {
  const { token } = found;
  if (!usable(found, server.clock()) || token.rotatedAt !== null) return INACTIVE;
  const scopes = currentScopes(found);
  const subject = tokenSubject(token);
  const seconds = (ms: number) => Math.floor(ms / 1000);
  return {
    active: true,
    ...(scopes.length ? { scope: scopes.join(' ') } : {}),
    client_id: token.clientId,
    ...(token.type === 'access_token' ? { token_type: 'Bearer' as const } : {}),
    ...(token.expiresAt === null ? {} : { exp: seconds(token.expiresAt) }),
    iat: seconds(token.createdAt),
    sub: subject.sub,
    subject_kind: subject.kind,
    iss: server.urls.issuer,
    ...audienceOf(token.resources ?? []),
  };
}

/** RFC 7662 2.2 `aud`: one resource as a string, several as an array. */
function audienceOf(resources: readonly string[]): { aud?: string | string[] } {
  if (resources.length === 0) return {};
  return { aud: resources.length === 1 ? resources[0]! : [...resources] };
}

function checkResourceServers(ids: readonly string[] | undefined): readonly string[] {
  if (ids === undefined) return [];
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string' || id === '')) {
    throw new TypeError(
      'openid-oauth-bridge: invalid options\n  resourceServers: must be an array of client ids',
    );
  }
  return ids;
}
