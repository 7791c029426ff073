import type { ClientKind, EndpointTraceName, RequestTrace } from '../../observability/channels.js';
import type { ClientRecord } from '../../storage/types.js';
import { isPublicClient } from '../../rules/client-kind.js';
import type { Context, EndpointName } from './context.js';

export type { Trace } from './context.js';

/** The channel each endpoint is traced on: one per endpoint of the RFCs, the pages by their family. */
const TRACE_NAMES: Record<EndpointName, EndpointTraceName> = {
  authorization: 'authorize',
  authorization_resume: 'authorize',
  consent: 'authorize',
  device_verification: 'device',
  device_authorization: 'device',
  login: 'login',
  login_callback: 'login',
  logout: 'logout',
  end_session: 'logout',
  applications: 'applications',
  applications_revoke: 'applications',
  developers: 'developers',
  developers_new: 'developers',
  developers_create: 'developers',
  developers_app: 'developers',
  developers_update: 'developers',
  developers_rotate: 'developers',
  developers_delete: 'developers',
  token: 'token',
  revocation: 'revoke',
  introspection: 'introspect',
  registration: 'register',
  bearer: 'bearer',
  jwks: 'jwks',
  userinfo: 'userinfo',
};

export function traceNameOf(endpoint: EndpointName): EndpointTraceName {
  return TRACE_NAMES[endpoint];
}

/** The grant types a token request is counted by; any other is `other`. */
const GRANT_TYPES = new Set([
  'authorization_code',
  'refresh_token',
  'urn:ietf:params:oauth:grant-type:device_code',
  'client_credentials',
]);

/**
 * What a trace says of a request, read from its context once it ends, written into `trace`: the
 * grant type asked for (a token request) or served (an authorization that issued a code or a
 * token), the client's kind, the provider of a login. Bounded words only: never a raw client id.
 */
export function describeRequest(ctx: Context, trace: RequestTrace): void {
  const seen = ctx as Context & {
    params?: ReadonlyMap<string, string>;
    client?: ClientRecord;
    provider?: { name?: unknown };
    providerName?: unknown;
    issued?: 'authorization_code' | 'implicit';
  };
  if (ctx.endpoint.name === 'token') {
    const grantType = seen.params?.get('grant_type');
    if (grantType !== undefined) trace.grantType = GRANT_TYPES.has(grantType) ? grantType : 'other';
  } else if (seen.issued !== undefined) {
    trace.grantType = seen.issued;
  }
  if (seen.client !== undefined) trace.clientKind = clientKindOf(seen.client);
  const provider = typeof seen.providerName === 'string' ? seen.providerName : seen.provider?.name;
  if (typeof provider === 'string') trace.provider = provider;
}

/** The kind a client is counted by: how it came to be, then whether it keeps a secret. */
export function clientKindOf(client: ClientRecord): ClientKind {
  if (client.registeredVia === 'document') return 'document';
  if (client.registeredVia === 'dynamic') return 'dynamic';
  if (client.ownerId != null) return 'member';
  return isPublicClient(client) ? 'public' : 'confidential';
}
