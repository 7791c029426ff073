import { generateSecret, hashSecret, randomId } from '../crypto/secrets.js';
import type { ClientRecord, ClientStore, Storage } from '../storage/types.js';
import { checkClientFields } from './checks.js';
import type { ClientRegistration, RegistrationContext } from './registration.js';
import { ownerOf, targetOf, type RegistrationTarget } from './target.js';

export type { ClientRegistration, RegistrationContext } from './registration.js';
export type { RegistrationTarget } from './target.js';
import { isPublicClient } from '../rules/client-kind.js';

/**
 * Refused because a client with this `client_id` is registered already. To change that client,
 * use `updateClient` (or the CLI's `clients update`); to keep it, catch this error (its
 * `code` is `CLIENT_ID_TAKEN`), as a start-up script that registers a fixed client does.
 */
export class ClientIdTakenError extends Error {
  readonly code = 'CLIENT_ID_TAKEN';

  /**
   * `instanceof` holds across copies of the package (one loaded by `import`, one by `require`):
   * the error's code decides, not the class object.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return (
      value instanceof Error &&
      (value as { code?: unknown }).code === 'CLIENT_ID_TAKEN' &&
      'clientId' in value
    );
  }

  constructor(readonly clientId: string) {
    super(
      `openid-oauth-bridge: a client with client_id ${JSON.stringify(clientId)} is already registered; ` +
        'choose another clientId, leave it out for a random one, or change the existing client with updateClient (CLI: clients update)',
    );
    this.name = 'ClientIdTakenError';
  }
}

/**
 * Refused because no client has this `client_id` (updateClient, rotateClientSecret): a
 * `TypeError`, as their other refusals, that the CLI tells apart. Not exported by the package.
 */
export class UnknownClientError extends TypeError {
  readonly code = 'CLIENT_NOT_FOUND';

  constructor(readonly clientId: string) {
    super(`openid-oauth-bridge: no client has client_id ${JSON.stringify(clientId)}`);
    this.name = 'UnknownClientError';
  }
}

/**
 * A team-gated client needs the account's claims (`users.saveClaims`/`users.findClaims`): every
 * gate reads the teams there. Without them it would refuse everyone, silently; so it is refused
 * when registered.
 */
export function requireClaimsStore(storage: Storage, allowedTeams: readonly string[] | undefined): void {
  if (!allowedTeams?.length) return;
  const { users } = storage;
  if (typeof users.saveClaims === 'function' && typeof users.findClaims === 'function') return;
  throw new TypeError(
    'openid-oauth-bridge: allowedTeams: the storage has no users.saveClaims and users.findClaims, where the teams of each account are kept; use a built-in adapter or add the pair to yours (docs/storage.md)',
  );
}

/** What the operator sends back to the applicant. The secret is shown this once only. */
export interface IssuedClient {
  clientId: string;
  /**
   * Only for confidential clients (code, device and client credentials); stored hashed, never
   * retrievable again.
   */
  clientSecret?: string;
}

/**
 * Whether a client of `grantType` is public: an implicit client always is; a code or device client
 * when registered so.
 */
export function publicFlag(value: unknown, grantType: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new TypeError(`openid-oauth-bridge: public must be true or false (got ${JSON.stringify(value)})`);
  }
  if (grantType === 'implicit') {
    if (value === false)
      throw new TypeError('openid-oauth-bridge: an implicit client is always public: it has no secret');
    return true;
  }
  return value === true;
}

/**
 * Registers a client application: the operator's side of the spec's out-of-band registration.
 * Never exposed over HTTP. Given the server, a scope it does not offer is refused here, not found
 * later as `invalid_scope` by the client's developer, and `client.added` is reported on its
 * events (never the secret).
 *
 * @example
 * const { clientId, clientSecret } = await registerClient(server, {
 *   applicationName: 'Photo printer',
 *   redirectUri: 'https://printer.example/callback',
 *   scopes: ['realms:read'],
 * });
 */
export async function registerClient(
  target: RegistrationTarget,
  registration: ClientRegistration,
  registrationContext: RegistrationContext = {},
): Promise<IssuedClient> {
  const { issued, record } = await createClient(target, registration, registrationContext, {});
  targetOf(target).report({
    type: 'client.added',
    clientId: record.clientId,
    applicationName: record.applicationName,
    grantType: record.grantType,
    public: issued.clientSecret === undefined,
    scopes: record.scopes,
    by: 'operator',
  });
  return issued;
}

/**
 * What a registration records besides the fields the operator gives: the library's own marks of
 * a client registered otherwise than by the operator (dynamic registration), and its time.
 */
export type RecordExtras = Partial<
  Pick<
    ClientRecord,
    | 'createdAt'
    | 'registeredVia'
    | 'unusedExpiresAt'
    | 'ownerId'
    | 'awaitingApproval'
    | 'description'
    | 'homepageUri'
  >
>;

/**
 * {@link registerClient}, with the same checks, recording `extras` too. The one way every
 * registration is written, whoever asks for it.
 *
 * @internal
 */
export async function registerWith(
  target: RegistrationTarget,
  registration: ClientRegistration,
  registrationContext: RegistrationContext,
  extras: RecordExtras,
): Promise<IssuedClient> {
  return (await createClient(target, registration, registrationContext, extras)).issued;
}

/** {@link registerWith}, resolving the record written too (for the operator's event). */
async function createClient(
  target: RegistrationTarget,
  registration: ClientRegistration,
  registrationContext: RegistrationContext,
  extras: RecordExtras,
): Promise<{ issued: IssuedClient; record: ClientRecord }> {
  const { storage, context } = targetOf(target, registrationContext);
  if (typeof registration !== 'object' || registration === null) {
    throw new TypeError('openid-oauth-bridge: registerClient needs { applicationName, redirectUri, scopes }');
  }
  const grantType = registration.grantType ?? 'authorization_code';
  const isPublic = publicFlag(registration.public, grantType);
  const offered = context.offeredScopes ?? [];
  const checked = checkClientFields(
    {
      ...registration,
      grantType,
      public: isPublic,
      // Without scopes, a client of a server that names its scopes may request all of them.
      ...(registration.scopes === undefined && offered.length > 0 ? { scopes: [...offered] } : {}),
    },
    context,
    true,
  );
  requireClaimsStore(storage, checked.allowedTeams);
  const clientId = registration.clientId ?? randomId();
  if (registration.clientId !== undefined) {
    if (typeof clientId !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(clientId)) {
      throw new TypeError(
        `openid-oauth-bridge: clientId must be 1 to 200 printable ASCII characters without spaces (got ${JSON.stringify(clientId)})`,
      );
    }
  }
  const clientSecret = isPublic ? undefined : generateSecret();
  const record: ClientRecord = {
    clientId,
    applicationName: checked.applicationName!,
    redirectUri: checked.redirectUri!,
    grantType,
    secretHash: clientSecret === undefined ? null : hashSecret(clientSecret),
    scopes: checked.scopes ?? [],
    defaultScopes: checked.defaultScopes ?? null,
    contacts: checked.contacts ?? [],
    ...(checked.postLogoutRedirectUris?.length
      ? { postLogoutRedirectUris: checked.postLogoutRedirectUris }
      : {}),
    disabled: false,
    ...(registration.requirePkce ? { requirePkce: true } : {}),
    ...(checked.allowedTeams?.length ? { allowedTeams: checked.allowedTeams } : {}),
    ...(checked.resources?.length ? { resources: checked.resources } : {}),
    createdAt: Date.now(),
    ...extras,
  };
  try {
    await operatorMethod(storage, 'create')(record);
  } catch (err) {
    // The insert refuses a taken id (a unique violation, whatever the adapter calls it); the
    // client found under the id says that was the reason, and not a failure of the database.
    if (await storage.clients.find(clientId).catch(() => null)) throw new ClientIdTakenError(clientId);
    throw err;
  }
  return { issued: clientSecret === undefined ? { clientId } : { clientId, clientSecret }, record };
}

/**
 * Replaces a code client's secret: the old one stops working at once (and a previous one a
 * member's rotation kept working stops too). Resolves the new secret, shown this once and stored
 * only as a hash. Given the server, reports `client.secret_rotated` (without the secret).
 *
 * @throws TypeError when the client does not exist (`no client has client_id …`) or is an
 *   implicit client (which has no secret).
 */
export async function rotateClientSecret(target: RegistrationTarget, clientId: string): Promise<string> {
  const { storage, report } = targetOf(target);
  const client = await storage.clients.find(clientId);
  if (!client) throw new UnknownClientError(clientId);
  if (isPublicClient(client))
    throw new TypeError(`openid-oauth-bridge: client ${clientId} is a public client: it has no secret`);
  const secret = generateSecret();
  const updated = await operatorMethod(storage, 'update')(clientId, {
    secretHash: hashSecret(secret),
    previousSecret: null,
  });
  if (!updated) throw new UnknownClientError(clientId);
  report({ type: 'client.secret_rotated', clientId, ...ownerOf(updated), by: 'operator' });
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
