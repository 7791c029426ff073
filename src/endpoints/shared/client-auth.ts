import type { Request } from 'express';
import type { AuthorizationServer } from '../../config/server.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { hashSecret } from '../../crypto/secrets.js';
import { emit, eventContext } from '../../events/emit.js';
import type { ClientAuthenticationFailedEvent } from '../../events/types.js';
import type { FormContext } from './form.js';
import { optionalParam } from '../../http/params.js';
import type { Step } from './pipeline.js';
import { ephemeralKeys } from '../../storage/keys.js';
import { readRows } from '../../storage/read.js';
import type { ClientRecord, FoundTokenRecord, GrantRecord, StorageRead } from '../../storage/types.js';
import type { DevicePollRows } from '../../grants/device.js';
import { parseBasic } from './client-credentials.js';
import { inService, isPublicClient, secretIsClients, type LoadedClient } from '../../rules/client-kind.js';
import { DocumentRefusedError, namedClient } from './document-client.js';
import { applyClientAuthLimits, clientAuthLimits, type Limit } from './client-rate-limit.js';
import { clientKindOf } from './trace.js';

/** Compared against when the client is unknown, so that case takes as long as a wrong secret. */
const UNKNOWN_CLIENT = { secretHash: hashSecret('unknown client'), previousSecret: null };

/** The context of an endpoint that authenticates clients (token, revocation, introspection). */
export interface ClientContext extends FormContext {
  /** The authenticated client, once {@link authenticateClient} has run. */
  client: LoadedClient;
  /** What the request presents, and the client it names as {@link loadClientRows} read it. */
  presented: Presented;
  /** The rate limits the request falls under, with their counters as read. */
  limits: { limit: Limit; count: string | null }[];
  /**
   * The token the request names (`token` at revocation and introspection, `refresh_token` at
   * the token endpoint), with its grant and client as read; `null` if unknown.
   */
  token?: FoundTokenRecord | null;
  /** The authorization code the request names: its hash, the entry stored under it and the grant it names, as read. */
  code?: { hash: string; entry: string | null; grant: GrantRecord | null };
  /** The device code the request names (RFC 8628): its hash and its entries, as read. */
  device?: DevicePollRows;
  /** Why authentication failed; thrown once the rate limit has counted it. */
  authFailure?: OAuthError;
}

/** The credentials a request presents, and the client of the id it presents. */
interface Presented {
  /** The `client_id` (HTTP Basic or body), whether it authenticates or not. */
  id: string | undefined;
  secret: string | undefined;
  /** Whether the request presents a secret at all (a public client names itself without one). */
  presentsSecret: boolean;
  /** With its metadata document's facts when the id is a document's URL ({@link namedClient}). */
  client: LoadedClient | null;
}

/** The code or token a request names, read together with its client and counters. */
export interface NamedRows {
  /** The hash of an authorization code. */
  code?: string;
  /** The hash of an access or refresh token. */
  token?: string;
  /** The hash of a device code (RFC 8628). */
  device?: string;
}

/** The hash of a parameter's value, when it is there; a missing one is the handler's to refuse. */
export function paramHash(params: Map<string, string>, name: string): string | undefined {
  const value = params.get(name);
  return value === undefined || value === '' ? undefined : hashSecret(value);
}

/**
 * Step: reads what the endpoint needs, at once ({@link readRows}): the client the request names,
 * the counters of the rate limits it falls under and the code or token `named` names (a code
 * with the grant it names). Reads only;
 * nothing is written before the client is authenticated. Malformed credentials are refused here.
 */
export function loadClientRows<C extends ClientContext>(named: (ctx: C) => NamedRows): Step<C> {
  return async function load(ctx) {
    const { server, req, params } = ctx;
    const { id, secret } = presentedCredentials(req, params);
    const limits = clientAuthLimits(server, req, id);
    const { code, token, device } = named(ctx);
    const keys = limits.map(({ key }) => key);
    const read: StorageRead = { ephemeral: keys };
    if (id !== undefined) read.client = id;
    if (token !== undefined) read.token = token;
    const codeKey = code === undefined ? undefined : ephemeralKeys.code(code);
    if (codeKey !== undefined) {
      keys.push(codeKey);
      // A code names its grant: read with it, the exchange reads nothing more.
      read.grantOf = codeKey;
    }
    if (device !== undefined) {
      keys.push(
        ephemeralKeys.device(device),
        ephemeralKeys.deviceDecision(device),
        ephemeralKeys.devicePoll(device),
      );
    }
    const rows = await readRows(server.storage, read, server.clock());
    const presentsSecret = req.get('authorization') !== undefined || params.has('client_secret');
    // A metadata document that cannot be used names no client: invalid_client, as an unknown id.
    const client = id === undefined ? null : await documentClient(ctx, id, rows.client);
    ctx.presented = { id, secret, presentsSecret, client };
    // Anyone may name a public client (its id is no secret): failures it did not cause must not
    // lock its users out, so they count per address only.
    const entry = (key: string) => rows.ephemeral[key] ?? null;
    ctx.limits = limits
      .map((limit) => ({ limit, count: entry(limit.key) }))
      .filter(({ limit }) => limit.per === 'address' || client === null || !isPublicClient(client));
    if (code !== undefined) ctx.code = { hash: code, entry: entry(codeKey!), grant: rows.grant };
    if (device !== undefined) {
      ctx.device = {
        hash: device,
        request: entry(ephemeralKeys.device(device)),
        decision: entry(ephemeralKeys.deviceDecision(device)),
        poll: entry(ephemeralKeys.devicePoll(device)),
      };
    }
    if (token !== undefined) ctx.token = rows.token;
  };
}

async function documentClient(
  ctx: ClientContext,
  id: string,
  stored: ClientRecord | null,
): Promise<LoadedClient | null> {
  try {
    return await namedClient(ctx.server, id, stored, ctx.req);
  } catch (err) {
    if (err instanceof DocumentRefusedError) return null;
    throw err;
  }
}

/**
 * Step: authenticate the client ({@link verifyClient}). A failure is kept, not thrown, so that
 * {@link limitFailures} counts it first.
 */
export function authenticateClient(ctx: ClientContext): void {
  try {
    ctx.client = verifyClient(ctx);
  } catch (err) {
    if (!(err instanceof OAuthError && err.code === 'invalid_client')) throw err;
    ctx.authFailure = err;
  }
}

/**
 * Step of the endpoints a public client uses (token, device authorization, revocation): a public
 * client (it has no secret: an implicit client, or a code or device client registered as public)
 * names itself with `client_id` alone and presents no secret (RFC 6749 2.1 and 3.2.1, RFC 7009
 * 5); every other client authenticates ({@link authenticateClient}). What the client may do is
 * the endpoint's to check (the token endpoint's grants check the client is registered for them).
 */
export function authenticateOrNamePublicClient(ctx: ClientContext): void {
  const { client, presentsSecret } = ctx.presented;
  if (!presentsSecret && client && inService(client) && isPublicClient(client)) {
    ctx.client = client;
    return;
  }
  authenticateClient(ctx);
}

/**
 * Step: the rate limits on failed client authentications count a failure, or refuse a client or
 * address over its limit with 429 ({@link applyClientAuthLimits}); then a failure is refused
 * with 401 `invalid_client`.
 */
export function limitFailures(ctx: ClientContext): void | Promise<void> {
  const limited = applyClientAuthLimits(
    ctx.server,
    ctx.req,
    ctx.limits.map(({ limit }) => limit),
    ctx.limits.map(({ count }) => count),
    ctx.authFailure !== undefined,
  );
  if (limited === undefined) return throwFailure(ctx);
  return limited.then(() => throwFailure(ctx));
}

function throwFailure(ctx: ClientContext): void {
  if (ctx.authFailure) throw ctx.authFailure;
}

type AuthEndpoint = ClientAuthenticationFailedEvent['endpoint'];

/**
 * The credentials a request presents (RFC 6749 2.3.1): `client_secret` in the form body (the
 * spec) or HTTP Basic, never both; `invalid_request` for both, or for ids that differ.
 */
function presentedCredentials(
  req: Request,
  params: Map<string, string>,
): { id: string | undefined; secret: string | undefined } {
  const basic = parseBasic(req.get('authorization'));
  const bodyId = optionalParam(params, 'client_id');
  const bodySecret = optionalParam(params, 'client_secret');
  if (basic && bodySecret !== undefined) {
    throw new OAuthError('invalid_request', 'Use one client authentication method, not both.');
  }
  if (basic && bodyId !== undefined && bodyId !== basic.id) {
    throw new OAuthError('invalid_request', 'client_id does not match the Authorization header.');
  }
  return { id: basic?.id ?? bodyId, secret: basic?.secret ?? bodySecret };
}

/**
 * Authenticates the client by its presented id and secret. An unknown client, a missing or
 * wrong secret, a disabled client and a public client (it has no secret) all give the same
 * `invalid_client`, reported as a `client.authentication_failed` event of the endpoint.
 */
function verifyClient(ctx: ClientContext): LoadedClient {
  const { server, req } = ctx;
  const { id, secret, client } = ctx.presented;
  const failed = () => {
    const presented = id === undefined ? {} : { clientId: id };
    const endpoint = ctx.endpoint.name as AuthEndpoint;
    const clientKind = client ? clientKindOf(client) : 'unknown';
    emit(server, {
      type: 'client.authentication_failed',
      ...presented,
      endpoint,
      clientKind,
      ...eventContext(req),
    });
    return invalidClient(server);
  };
  if (id === undefined || secret === undefined) throw failed();
  const matches = secretIsClients(secret, client ?? UNKNOWN_CLIENT, server.clock());
  if (!client || !matches || !inService(client) || isPublicClient(client)) {
    throw failed();
  }
  return client;
}

/** RFC 6749 5.2: 401 with a `WWW-Authenticate` challenge (Basic, the scheme RFC 6749 2.3.1 requires). */
function invalidClient(server: AuthorizationServer): OAuthError {
  return new OAuthError('invalid_client', 'Client authentication failed.', {
    headers: { 'WWW-Authenticate': `Basic realm="${new URL(server.urls.base).host}"` },
  });
}
