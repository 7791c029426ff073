import { generateSecret, hashSecret, randomId } from '../crypto/secrets.js';
import type { ClientGrantType, ClientStore, Storage } from '../storage/types.js';
import { registeredRedirectUriProblem } from './redirect-uri.js';

export interface ClientRegistration {
  /** User-friendly name presented to the user (the spec's `application_name`). */
  applicationName: string;
  /** Base redirect URI (the spec's `redirect_URI`), in canonical form. */
  redirectUri: string;
  /** Default `authorization_code`. */
  grantType?: ClientGrantType;
  /** Scopes the client may request. */
  scopes?: string[];
  /** Scopes granted when a request names none; default all of `scopes`. */
  defaultScopes?: string[];
  /** Ways to reach the client's developers, for the operator. */
  contacts?: string[];
  /** Choose the id yourself (e.g. for a fixed demo client); default a random UUID. */
  clientId?: string;
  /** Require PKCE (`code_challenge`, S256) on every request; code clients only. Default `false`. */
  requirePkce?: boolean;
}

/** What the operator sends back to the applicant. The secret is shown this once only. */
export interface IssuedClient {
  clientId: string;
  /** Only for `authorization_code` clients; stored hashed, never retrievable again. */
  clientSecret?: string;
}

/**
 * Registers a client application: the operator's side of the spec's out-of-band registration.
 * Never exposed over HTTP.
 *
 * @example
 * const { clientId, clientSecret } = await registerClient(storage, {
 *   applicationName: 'Photo printer',
 *   redirectUri: 'https://printer.example/callback',
 * });
 */
export async function registerClient(
  storage: Storage,
  registration: ClientRegistration,
): Promise<IssuedClient> {
  const problem = registeredRedirectUriProblem(registration.redirectUri);
  if (problem) throw new TypeError(`redirectUri ${problem}`);
  const name = registration.applicationName.trim();
  if (!name || name.length > 200) throw new TypeError('applicationName must have 1 to 200 characters');
  const grantType = registration.grantType ?? 'authorization_code';
  const scopes = registration.scopes ?? [];
  const unknownDefault = registration.defaultScopes?.find((scope) => !scopes.includes(scope));
  if (unknownDefault !== undefined) {
    throw new TypeError(`defaultScopes: ${unknownDefault} is not one of the client's scopes`);
  }
  if (registration.requirePkce && grantType !== 'authorization_code') {
    throw new TypeError('requirePkce applies to authorization_code clients only');
  }
  const clientId = registration.clientId ?? randomId();
  const clientSecret = grantType === 'authorization_code' ? generateSecret() : undefined;
  await operatorMethod(
    storage,
    'create',
  )({
    clientId,
    applicationName: name,
    redirectUri: registration.redirectUri,
    grantType,
    secretHash: clientSecret === undefined ? null : hashSecret(clientSecret),
    scopes,
    defaultScopes: registration.defaultScopes ?? null,
    contacts: registration.contacts ?? [],
    disabled: false,
    ...(registration.requirePkce ? { requirePkce: true } : {}),
    createdAt: Date.now(),
  });
  return clientSecret === undefined ? { clientId } : { clientId, clientSecret };
}

/**
 * Replaces a code client's secret: the old one stops working at once. Resolves the new secret,
 * shown this once and stored only as a hash.
 *
 * @throws TypeError when the client does not exist or is an implicit client (which has no secret).
 */
export async function rotateClientSecret(storage: Storage, clientId: string): Promise<string> {
  const client = await storage.clients.find(clientId);
  if (!client) throw new TypeError(`no client ${clientId}`);
  if (client.grantType !== 'authorization_code')
    throw new TypeError(`client ${clientId} is an implicit client: it has no secret`);
  const secret = generateSecret();
  await operatorMethod(storage, 'update')(clientId, { secretHash: hashSecret(secret) });
  return secret;
}

/**
 * One of the optional operator methods of the client store, bound, or a clear error saying the
 * adapter has none.
 */
export function operatorMethod<K extends keyof Required<ClientStore>>(
  storage: Storage,
  name: K,
): NonNullable<ClientStore[K]> {
  const method = storage.clients[name];
  if (typeof method !== 'function') {
    throw new TypeError(
      `the storage adapter has no clients.${String(name)}(): its clients are managed elsewhere`,
    );
  }
  return method.bind(storage.clients) as NonNullable<ClientStore[K]>;
}
