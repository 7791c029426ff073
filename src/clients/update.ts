import { generateSecret, hashSecret } from '../crypto/secrets.js';
import { isPublicClient } from '../rules/client-kind.js';
import type { ClientChanges, ClientGrantType, ClientRecord } from '../storage/types.js';
import { checkClientFields } from './checks.js';
import { sameValue } from './member-changes.js';
import type { RegistrationContext } from './registration.js';
import { operatorMethod, publicFlag, requireClaimsStore, UnknownClientError } from './register.js';
import { ownerOf, targetOf, type RegistrationTarget } from './target.js';

/*
 * The operator's change of a registered client in place (the CLI's `clients update`): the checks
 * of registerClient, on the fields given; reported as `client.updated` with the names of the
 * fields that changed, never a value that is a secret.
 */

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
 * Resolves the client as changed. Given the server, reports `client.updated` on its events, with
 * the names of the fields that changed.
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
  const { storage, context, report } = targetOf(target, registrationContext);
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
  const changed = changedFields(client, changes, isPublic !== isPublicClient(client));
  if (changed.length > 0) {
    const secretIssued = clientSecret !== undefined;
    report({ type: 'client.updated', clientId, ...ownerOf(client), changed, secretIssued, by: 'operator' });
  }
  return clientSecret === undefined ? updated : { ...updated, clientSecret };
}

/** The default scopes that remain among narrower scopes; none left: `null`, all of them. */
function narrowed(defaults: readonly string[], scopes: readonly string[]): string[] | null {
  const kept = defaults.filter((scope) => scopes.includes(scope));
  return kept.length ? kept : null;
}

/** The secret's fields: a new kind says `public` changed, and `secretIssued` says a secret was made. */
const SECRET_FIELDS = new Set(['secretHash', 'previousSecret']);

/** The names of the fields `changes` sets to another value than `client` has. */
function changedFields(client: ClientRecord, changes: ClientChanges, kindChanged: boolean): string[] {
  const before = client as unknown as Record<string, unknown>;
  const changed = Object.entries(changes)
    .filter(([field, value]) => !SECRET_FIELDS.has(field) && !sameValue(before[field], value))
    .map(([field]) => field);
  return kindChanged ? [...changed, 'public'] : changed;
}
