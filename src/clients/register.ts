import { generateSecret, hashSecret, randomId } from '../crypto/secrets.js';
import type { ClientChanges, ClientGrantType, ClientRecord, ClientStore, Storage } from '../storage/types.js';
import { checkClientFields } from './checks.js';
import type { ClientRegistration, RegistrationContext } from './registration.js';

export type { ClientRegistration, RegistrationContext } from './registration.js';
import { isPublicClient } from '../rules/client-kind.js';

/**
 * Refused because a client with this `client_id` is registered already. To change that client,
 * use {@link updateClient} (or the CLI's `clients update`); to keep it, catch this error (its
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
function requireClaimsStore(storage: Storage, allowedTeams: readonly string[] | undefined): void {
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
 * Where clients are registered: the authorization server (its storage, and the scopes it offers,
 * which every scope of a client must then be one of), or a storage alone (any well-formed scope,
 * unless the context names the offered ones).
 */
export type RegistrationTarget =
  | Storage
  | {
      readonly storage: Storage;
      readonly options: {
        readonly scopes: Readonly<Record<string, string>>;
        /** The server's profile: `'oauth2.1'` refuses implicit clients. */
        readonly profile?: 'oauth2' | 'oauth2.1';
      };
    };

/** The storage and the registration context of a {@link RegistrationTarget}. */
function targetOf(target: RegistrationTarget, context: RegistrationContext) {
  if (!('options' in target)) return { storage: target, context };
  const offered = Object.keys(target.options.scopes);
  const { profile } = target.options;
  return {
    storage: target.storage,
    context: { offeredScopes: offered, ...(profile === undefined ? {} : { profile }), ...context },
  };
}

/**
 * Whether a client of `grantType` is public: an implicit client always is; a code or device client
 * when registered so.
 */
function publicFlag(value: unknown, grantType: unknown): boolean {
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
 * later as `invalid_scope` by the client's developer.
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
  return registerWith(target, registration, registrationContext, {});
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
  try {
    await operatorMethod(
      storage,
      'create',
    )({
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
    });
  } catch (err) {
    // The insert refuses a taken id (a unique violation, whatever the adapter calls it); the
    // client found under the id says that was the reason, and not a failure of the database.
    if (await storage.clients.find(clientId).catch(() => null)) throw new ClientIdTakenError(clientId);
    throw err;
  }
  return clientSecret === undefined ? { clientId } : { clientId, clientSecret };
}

/** What {@link updateClient} can change; a field left out stays as it is. */
export interface ClientUpdate {
  applicationName?: string;
  redirectUri?: string;
  /**
   * Another grant: to `implicit` the secret is dropped (the client's refresh tokens stop working:
   * a refresh needs the secret); from `implicit` to a code or device grant a new secret is issued,
   * returned once as `clientSecret` (unless `public: true`). To `device_code` the redirect URI is
   * dropped; from it, give `redirectUri`. A `client_credentials` client acts as itself and a
   * client of another grant for its members: neither turns into the other (register a new client).
   */
  grantType?: ClientGrantType;
  /**
   * Make a code or device client public (its secret is dropped; a code client then must use PKCE)
   * or confidential (a new secret is issued, returned once as `clientSecret`).
   */
  public?: boolean;
  scopes?: string[];
  /** `null`: all of `scopes`. */
  defaultScopes?: string[] | null;
  contacts?: string[];
  /** Replaces the post-logout redirect URIs (`[]`: none). */
  postLogoutRedirectUris?: string[];
  requirePkce?: boolean;
  /** Replaces the teams whose members alone may use the client (`[]`: anyone). */
  allowedTeams?: string[];
  /** Replaces the resources the client may ask tokens for (`[]`: every declared resource). */
  resources?: string[];
}

/**
 * Changes a registered client in place, with the checks of {@link registerClient}: its name,
 * redirect URI, grant, scopes, default scopes, contacts and PKCE requirement. Its secret, grants and
 * tokens stay (narrowing its scopes does not revoke what was granted; revoke grants for that).
 * Resolves the client as changed.
 *
 * @throws TypeError when the client does not exist (`no client has client_id …`) or a change is refused.
 * @example
 * await updateClient(storage, 'photo-printer', { scopes: ['realms'], requirePkce: true });
 */
export async function updateClient(
  target: RegistrationTarget,
  clientId: string,
  update: ClientUpdate,
  registrationContext: RegistrationContext = {},
): Promise<ClientRecord & { clientSecret?: string }> {
  const { storage, context } = targetOf(target, registrationContext);
  const client = await storage.clients.find(clientId);
  if (!client) throw new UnknownClientError(clientId);
  const scopes = update.scopes ?? client.scopes;
  const defaultScopes =
    update.defaultScopes !== undefined
      ? update.defaultScopes
      : update.scopes !== undefined && client.defaultScopes
        ? narrowed(client.defaultScopes, update.scopes)
        : undefined;
  const grantType = update.grantType ?? client.grantType;
  if ((grantType === 'client_credentials') !== (client.grantType === 'client_credentials')) {
    // Its grants would change meaning: members' consents kept by a client acting as itself, or
    // its own grant listed as a member's.
    throw new TypeError(
      `openid-oauth-bridge: client ${clientId} cannot change from ${client.grantType} to ${grantType}: a client_credentials client acts as itself and other clients act for members; register a new client instead`,
    );
  }
  // A client stays public or confidential unless told; an implicit one turning into a code or
  // device client becomes confidential, as it always did.
  const wasPublic = isPublicClient(client) && client.grantType !== 'implicit';
  const isPublic = publicFlag(update.public ?? (grantType === 'implicit' ? undefined : wasPublic), grantType);
  const kindChanges = grantType !== client.grantType || isPublic !== isPublicClient(client);
  // A change of grant or of kind checks the redirect URI the client ends up with.
  const redirectUri =
    update.redirectUri ?? (kindChanges && client.redirectUri !== '' ? client.redirectUri : undefined);
  const redirects = grantType !== 'device_code' && grantType !== 'client_credentials';
  if (kindChanges && redirects && redirectUri === undefined) {
    throw new TypeError(`openid-oauth-bridge: a ${grantType} client needs a redirectUri`);
  }
  const checked = checkClientFields(
    {
      grantType,
      public: isPublic,
      ...(update.applicationName === undefined ? {} : { applicationName: update.applicationName }),
      ...(redirectUri === undefined ? {} : { redirectUri }),
      ...(update.scopes === undefined ? {} : { scopes }),
      ...(update.contacts === undefined ? {} : { contacts: update.contacts }),
      ...(update.postLogoutRedirectUris === undefined
        ? {}
        : { postLogoutRedirectUris: update.postLogoutRedirectUris }),
      ...(defaultScopes ? { defaultScopes } : {}),
      ...(update.requirePkce === undefined ? {} : { requirePkce: update.requirePkce }),
      ...(update.allowedTeams === undefined ? {} : { allowedTeams: update.allowedTeams }),
      ...(update.resources === undefined ? {} : { resources: update.resources }),
    },
    context,
    false,
    client.scopes,
  );
  requireClaimsStore(storage, checked.allowedTeams);
  const changes: ClientChanges = {
    ...(checked.applicationName === undefined ? {} : { applicationName: checked.applicationName }),
    ...(checked.redirectUri === undefined ? {} : { redirectUri: checked.redirectUri }),
    ...(checked.scopes === undefined ? {} : { scopes: checked.scopes }),
    ...(defaultScopes === undefined ? {} : { defaultScopes: defaultScopes?.length ? defaultScopes : null }),
    ...(checked.contacts === undefined ? {} : { contacts: checked.contacts }),
    ...(checked.postLogoutRedirectUris === undefined
      ? {}
      : { postLogoutRedirectUris: checked.postLogoutRedirectUris }),
    ...(update.requirePkce === undefined ? {} : { requirePkce: update.requirePkce }),
    ...(checked.allowedTeams === undefined ? {} : { allowedTeams: checked.allowedTeams }),
    ...(checked.resources === undefined ? {} : { resources: checked.resources }),
  };
  // A new kind: a public client has no secret; one that becomes confidential gets a new one,
  // shown once. PKCE applies to code clients only (a public one needs it whatever the flag says).
  const clientSecret = kindChanges && !isPublic && isPublicClient(client) ? generateSecret() : undefined;
  if (kindChanges) {
    Object.assign(changes, {
      grantType,
      ...(isPublic
        ? { secretHash: null, previousSecret: null }
        : clientSecret === undefined
          ? {}
          : { secretHash: hashSecret(clientSecret), previousSecret: null }),
      ...(grantType === 'device_code' ? { redirectUri: '' } : {}),
      ...(grantType === 'authorization_code' ? {} : { requirePkce: false }),
    });
  }
  const updated = await operatorMethod(storage, 'update')(clientId, changes);
  if (!updated) throw new UnknownClientError(clientId);
  return clientSecret === undefined ? updated : { ...updated, clientSecret };
}

/** The default scopes that remain among narrower scopes; none left: `null`, all of them. */
function narrowed(defaults: readonly string[], scopes: readonly string[]): string[] | null {
  const kept = defaults.filter((scope) => scopes.includes(scope));
  return kept.length ? kept : null;
}

/**
 * Replaces a code client's secret: the old one stops working at once (and a previous one a
 * member's rotation kept working stops too). Resolves the new secret, shown this once and stored
 * only as a hash.
 *
 * @throws TypeError when the client does not exist (`no client has client_id …`) or is an
 *   implicit client (which has no secret).
 */
export async function rotateClientSecret(storage: Storage, clientId: string): Promise<string> {
  const client = await storage.clients.find(clientId);
  if (!client) throw new UnknownClientError(clientId);
  if (isPublicClient(client))
    throw new TypeError(`openid-oauth-bridge: client ${clientId} is a public client: it has no secret`);
  const secret = generateSecret();
  await operatorMethod(storage, 'update')(clientId, { secretHash: hashSecret(secret), previousSecret: null });
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
