import type { ServerEvent, ServerEventOf, ServerEventType } from '../events/types.js';
import { redactConnectionString } from '../storage/redact.js';

/*
 * What one audit line says of an event: who (the account, the client, the owner, `by`), what (the
 * event's bounded fields), when and in which request. Each line is built from an allow-list of
 * the event's fields, never by dumping the event: a field added to an event later stays out of
 * the trail until it is named here, and a new event type does not compile until it has its row.
 */

/** The fields of each event an audit line carries, by the event's own names, in line order. */
const AUDIT_FIELDS: { readonly [T in ServerEventType]: readonly (keyof ServerEventOf<T> & string)[] } = {
  'login.succeeded': ['userId', 'provider', 'clientId'],
  'login.failed': ['provider', 'clientId', 'outcome', 'reason'],
  'consent.given': ['userId', 'clientId', 'scopes'],
  'consent.denied': ['userId', 'clientId'],
  'consent.revoked': ['by', 'userId', 'clientId', 'grantId'],
  'code.issued': ['userId', 'clientId', 'grantId', 'scopes', 'pkce'],
  'code.replayed': ['userId', 'clientId', 'presentedBy', 'grantId'],
  'token.issued': ['userId', 'clientId', 'grantId', 'grantType', 'scopes', 'resources', 'refreshToken'],
  'token.refreshed': ['userId', 'clientId', 'grantId', 'scopes', 'resources', 'rotated'],
  'refresh_token.reused': ['userId', 'clientId', 'grantId'],
  'token.revoked': ['userId', 'clientId', 'grantId', 'tokenType'],
  'client.registered': [
    'clientId',
    'applicationName',
    'redirectUri',
    'scopes',
    'public',
    'initialAccessToken',
  ],
  // The client id presented, which may name no client: bounded and redacted like every value.
  'client.authentication_failed': ['clientId', 'clientKind', 'endpoint'],
  // Not the description: it may quote the document.
  'client_document.refused': ['clientId', 'reason'],
  'client_document.saved': ['clientId', 'applicationName', 'redirectUris', 'created'],
  'profile.unavailable': ['provider', 'source', 'reason', 'cached'],
  'device.requested': ['clientId', 'scopes'],
  'device.authorized': ['userId', 'clientId', 'grantId', 'scopes'],
  'device.denied': ['userId', 'clientId'],
  'device.user_code_rejected': ['limited'],
  'team.refused': ['userId', 'clientId', 'allowedTeams', 'flow'],
  'app.created': ['ownerId', 'clientId', 'confidential', 'awaitingApproval'],
  'app.updated': ['ownerId', 'clientId', 'changed'],
  'app.secret_rotated': ['ownerId', 'clientId', 'previousValidUntil'],
  'app.deleted': ['ownerId', 'clientId'],
  'app.reach_capped': ['userId', 'ownerId', 'clientId', 'reach'],
  // The operator's changes (the CLI, or the host's code calling the operator functions).
  'client.added': ['by', 'clientId', 'applicationName', 'grantType', 'public', 'scopes'],
  'client.updated': ['by', 'ownerId', 'clientId', 'changed', 'secretIssued'],
  'client.secret_rotated': ['by', 'ownerId', 'clientId'],
  'client.disabled': ['by', 'ownerId', 'clientId'],
  'client.enabled': ['by', 'ownerId', 'clientId'],
  'client.removed': ['by', 'clientId'],
  'client.approved': ['by', 'ownerId', 'clientId'],
  'client.verified': ['by', 'ownerId', 'clientId'],
  'client.unverified': ['by', 'ownerId', 'clientId'],
  'client.transferred': ['by', 'clientId', 'ownerId', 'previousOwnerId'],
  'client.suspended': ['by', 'ownerId', 'clientIds', 'count'],
  // The key's public id, as the JWKS publishes it.
  'signing_key.created': ['kid', 'alg', 'state'],
  'signing_key.rotated': ['by', 'kid', 'alg', 'previousKid', 'nextKid'],
  'signing_key.retired': ['by', 'kid', 'alg', 'forced'],
  // Which limit refused, and under what it counts: the request's `ip` says who.
  'rate_limit.exceeded': ['limit', 'per'],
  // Never the error: what an adapter or a strategy threw may quote anything.
  'server.error': ['endpoint', 'status'],
};

/**
 * The events an audit trail writes unless told otherwise: logins, consents given, refused and
 * withdrawn, every grant (a code, tokens, a refresh, a device approved), every revocation, a
 * replayed code or refresh token, clients registered, saved from their documents or changed by
 * their members, every operator's change of a client or a signing key (the CLI's, or the host's
 * code's), clients failing to authenticate, user codes refused, requests a rate limit refused,
 * teams refused, signing keys the server made. Left out:
 * what is not a decision about access (`device.requested`, `client_document.refused`,
 * `profile.unavailable`, `server.error`); add them with `types`.
 */
export const AUDIT_EVENT_TYPES: readonly ServerEventType[] = Object.freeze([
  'login.succeeded',
  'login.failed',
  'consent.given',
  'consent.denied',
  'consent.revoked',
  'code.issued',
  'code.replayed',
  'token.issued',
  'token.refreshed',
  'refresh_token.reused',
  'token.revoked',
  'client.registered',
  'client.authentication_failed',
  'client_document.saved',
  'device.authorized',
  'device.denied',
  'device.user_code_rejected',
  'rate_limit.exceeded',
  'team.refused',
  'app.created',
  'app.updated',
  'app.secret_rotated',
  'app.deleted',
  'app.reach_capped',
  'client.added',
  'client.updated',
  'client.secret_rotated',
  'client.disabled',
  'client.enabled',
  'client.removed',
  'client.approved',
  'client.verified',
  'client.unverified',
  'client.transferred',
  'client.suspended',
  'signing_key.created',
  'signing_key.rotated',
  'signing_key.retired',
]);

/** The types given, checked: an unknown name is a mistake to report now, not a silent gap. */
export function auditedTypes(types: readonly ServerEventType[]): ServerEventType[] {
  for (const type of types) {
    if (!Object.hasOwn(AUDIT_FIELDS, type)) {
      throw new TypeError(`openid-oauth-bridge: auditTrail: no event is named ${JSON.stringify(type)}`);
    }
  }
  return [...new Set(types)];
}

/** Longer strings are cut: a line stays a line, whatever a client sent as its id. */
const MAX_STRING = 256;
/** Longer lists are cut (scopes, redirect URIs, teams). */
const MAX_ITEMS = 32;
/** A URL with userinfo, a query or a fragment: where a secret could be. */
const URL_WITH_EXTRAS = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/.*[@?#]/s;

/** One audit line of `event`, without its newline. */
export function auditLine(event: ServerEvent): string {
  const line: Record<string, unknown> = { at: new Date(event.at).toISOString(), type: event.type };
  if (event.requestId !== undefined) line.request_id = bounded(event.requestId);
  if (event.ip !== undefined) line.ip = bounded(event.ip);
  const fields = event as unknown as Record<string, unknown>;
  for (const name of AUDIT_FIELDS[event.type] as readonly string[]) {
    const value = auditValue(name, fields[name]);
    if (value !== undefined) line[snakeCase(name)] = value;
  }
  return JSON.stringify(line);
}

/** The line that says how many lines were dropped before it (the output could not keep up). */
export function droppedLine(at: number, count: number): string {
  return JSON.stringify({ at: new Date(at).toISOString(), type: 'audit.dropped', count });
}

function auditValue(name: string, value: unknown): unknown {
  if (typeof value === 'string') return bounded(value);
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return name.endsWith('Until') ? new Date(value).toISOString() : value;
  if (Array.isArray(value)) {
    return value
      .slice(0, MAX_ITEMS)
      .filter((item) => typeof item === 'string')
      .map(bounded);
  }
  // Nothing else is allowed through, whatever an event carries one day.
  return undefined;
}

/**
 * A string fit for the trail: a URL (a client id that is a document's address, a redirect URI)
 * with userinfo or a query loses a password and the values of secret-looking query parameters, as a connection string in
 * a log line does; then anything long is cut.
 */
function bounded(value: string): string {
  const safe = URL_WITH_EXTRAS.test(value) ? redactConnectionString(value) : value;
  return safe.length <= MAX_STRING ? safe : `${safe.slice(0, MAX_STRING)}…`;
}

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
