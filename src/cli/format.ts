import { InvalidArgumentError } from 'commander';
import { SCOPE_TOKEN } from '../rules/scopes.js';
import { pkceRequired } from '../rules/client-kind.js';
import type { ClientRecord, GrantRecord, Storage } from '../storage/types.js';
import { unknownClient } from './errors.js';

/** A client in the spec's field names. */
export function clientJson(client: ClientRecord) {
  return {
    client_id: client.clientId,
    application_name: client.applicationName,
    redirect_uri: client.redirectUri,
    grant_type: client.grantType,
    public: client.secretHash === null,
    scope: client.scopes.join(' '),
    default_scope: (client.defaultScopes ?? client.scopes).join(' '),
    contacts: client.contacts ?? [],
    post_logout_redirect_uris: client.postLogoutRedirectUris ?? [],
    disabled: client.disabled,
    require_pkce: pkceRequired(client),
    allowed_teams: client.allowedTeams ?? [],
    resources: client.resources ?? [],
    registered_via: client.registeredVia ?? 'operator',
    owner_id: client.ownerId ?? null,
    verified: client.verified === true,
    awaiting_approval: client.awaitingApproval === true,
    ...(client.description ? { description: client.description } : {}),
    ...(client.homepageUri ? { homepage_uri: client.homepageUri } : {}),
    created_at: new Date(client.createdAt).toISOString(),
  };
}

/** The owner the CLI names `operator` (`--owner`, `--to`): no member, the operator's clients. */
export const OPERATOR = 'operator';

/** Who owns a client, as the CLI shows it: the member's account id, or `operator`. */
export const ownerName = (client: Pick<ClientRecord, 'ownerId'>) => client.ownerId ?? OPERATOR;

/**
 * Whether a client works: `active`, else why not: `disabled` (by the operator: `clients disable`
 * or `suspend`), `awaiting approval` (a member's, `clients approve`), or both.
 */
export function clientStatus(client: Pick<ClientRecord, 'disabled' | 'awaitingApproval'>): string {
  const reasons = [
    ...(client.disabled ? ['disabled'] : []),
    ...(client.awaitingApproval === true ? ['awaiting approval'] : []),
  ];
  return reasons.join(', ') || 'active';
}

const REGISTERED_BY: Record<NonNullable<ClientRecord['registeredVia']>, string> = {
  operator: 'the operator',
  document: 'itself: its client metadata document',
  dynamic: 'itself: dynamic registration',
};

export function describeClient(client: ClientRecord): string {
  const json = clientJson(client);
  return [
    `client_id         ${json.client_id}`,
    `application_name  ${json.application_name}`,
    `redirect_uri      ${json.redirect_uri || (client.grantType === 'client_credentials' ? '(none: acts as itself)' : '(none: device flow)')}`,
    `grant             ${grantName(client)}`,
    `client type       ${json.public ? 'public (no secret)' : 'confidential (has a secret)'}`,
    `scope             ${json.scope || '(none)'}`,
    `default scope     ${json.default_scope || '(none)'}`,
    `contacts          ${json.contacts.join(', ') || '(none)'}`,
    `post-logout URIs  ${json.post_logout_redirect_uris.join(' ') || '(none)'}`,
    `require PKCE      ${json.require_pkce ? 'yes' : 'no'}`,
    `allowed teams     ${json.allowed_teams.map((team) => `~${team}`).join(' ') || '(anyone)'}`,
    `resources         ${json.resources.join(' ') || '(every declared one)'}`,
    `registered by     ${REGISTERED_BY[json.registered_via]}`,
    `owner             ${json.owner_id === null ? 'the operator' : `member ${json.owner_id}`}`,
    ...(json.description === undefined ? [] : [`description       ${json.description}`]),
    ...(json.homepage_uri === undefined ? [] : [`home page         ${json.homepage_uri}`]),
    `verified          ${json.verified ? 'yes' : 'no'}`,
    `status            ${clientStatus(client)}`,
    `created_at        ${json.created_at}`,
  ].join('\n');
}

export async function grantJson(storage: Storage, grant: GrantRecord) {
  const user = (await storage.users.find?.(grant.userId)) ?? null;
  return {
    user_id: grant.userId,
    user_identifier: user?.identifier ?? null,
    provider: user?.provider ?? null,
    client_id: grant.clientId,
    grant_id: grant.grantId,
    scope: grant.scopes.join(' '),
    authorized_at: new Date(grant.createdAt).toISOString(),
    updated_at: new Date(grant.updatedAt).toISOString(),
  };
}

export async function requireClient(storage: Storage, clientId: string): Promise<ClientRecord> {
  const client = await storage.clients.find(clientId);
  if (!client) throw unknownClient(clientId);
  return client;
}

export const grantName = (client: ClientRecord) => GRANT_NAMES[client.grantType];

/** The CLI's names of the grant types, and back. */
export const GRANT_NAMES = {
  authorization_code: 'code',
  implicit: 'implicit',
  device_code: 'device',
  client_credentials: 'client_credentials',
} as const;
export const GRANT_OF_NAME = {
  code: 'authorization_code',
  implicit: 'implicit',
  device: 'device_code',
  client_credentials: 'client_credentials',
} as const;
export type GrantName = keyof typeof GRANT_OF_NAME;

/** Columns padded to their widest cell; the last column is left ragged. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

/** Commander's variadic parser: collects each scope, refusing what is not an RFC 6749 scope token. */
export function scopeList(value: string, previous: string[] | undefined): string[] {
  const scopes = value.split(' ').filter(Boolean);
  const bad = scopes.find((scope) => !SCOPE_TOKEN.test(scope));
  if (bad !== undefined || scopes.length === 0)
    throw new InvalidArgumentError(`${JSON.stringify(value)} is not a scope.`);
  return [...(previous ?? []), ...scopes];
}

export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < 1) {
    throw new InvalidArgumentError('must be a positive integer.');
  }
  return number;
}
