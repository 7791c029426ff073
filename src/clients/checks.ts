import { resourceKey } from '../rules/resources.js';
import { SCOPE_TOKEN } from '../rules/scopes.js';
import type { ClientGrantType, ClientRecord } from '../storage/types.js';
import { registeredRedirectUriProblem } from '../rules/redirect-uri.js';
import { TEAM_NAME } from '../rules/names.js';
import type { ClientRegistration, RegistrationContext } from './registration.js';

/** The grant types a client may be registered for: those this library implements. */
export const SUPPORTED_GRANT_TYPES: readonly ClientGrantType[] = [
  'authorization_code',
  'implicit',
  'device_code',
  'client_credentials',
];

/**
 * The checks of a registration or an update, each refusal a `TypeError` naming the field, the
 * value and the rule. A registration needs a name and a redirect URI; an update checks only the
 * fields it changes.
 */
export function checkClientFields(
  fields: Partial<ClientRegistration> & { grantType: unknown; public?: boolean },
  context: RegistrationContext,
  registering = false,
  /** An update's client's scopes, which default scopes must be among when `scopes` stay. */
  currentScopes: readonly string[] = [],
): Partial<
  Pick<
    ClientRecord,
    | 'applicationName'
    | 'redirectUri'
    | 'scopes'
    | 'defaultScopes'
    | 'contacts'
    | 'postLogoutRedirectUris'
    | 'allowedTeams'
    | 'resources'
  >
> {
  const refuse = (message: string): never => {
    throw new TypeError(`openid-oauth-bridge: ${message}`);
  };
  if (!SUPPORTED_GRANT_TYPES.includes(fields.grantType as ClientGrantType)) {
    refuse(
      `grantType ${JSON.stringify(fields.grantType)} is not supported: use 'authorization_code' (the default), 'device_code', 'client_credentials' or 'implicit'`,
    );
  }
  if (fields.grantType === 'implicit' && context.profile === 'oauth2.1') {
    refuse(
      "grantType 'implicit' is not offered by a server with profile 'oauth2.1' (OAuth 2.1 has no implicit grant): register an authorization_code client, public if it runs in a browser",
    );
  }
  const clientCredentials = fields.grantType === 'client_credentials';
  if (clientCredentials && fields.public === true) {
    refuse('a client_credentials client authenticates with its secret: it cannot be public (RFC 6749 4.4)');
  }
  if (fields.requirePkce && fields.grantType !== 'authorization_code') {
    refuse('requirePkce applies to authorization_code clients only (PKCE protects the code)');
  }
  if (fields.requirePkce === false && fields.public === true) {
    refuse('a public code client always uses PKCE: nothing else protects its code (RFC 8252 8.1)');
  }
  // Neither sends anything to a browser.
  const noRedirect = fields.grantType === 'device_code' || clientCredentials;
  const out: ReturnType<typeof checkClientFields> = {};
  if (registering || fields.applicationName !== undefined) {
    const name = typeof fields.applicationName === 'string' ? fields.applicationName.trim() : '';
    if (!name || name.length > 200) {
      refuse(`applicationName must have 1 to 200 characters (got ${JSON.stringify(fields.applicationName)})`);
    }
    out.applicationName = name;
  }
  if (noRedirect) {
    // The device flow and a client acting as itself send nothing to a browser: no redirect URI.
    if (fields.redirectUri !== undefined && fields.redirectUri !== '') {
      refuse(`a ${String(fields.grantType)} client has no redirect URI: leave redirectUri out`);
    }
    if (registering) out.redirectUri = '';
  } else if (registering || fields.redirectUri !== undefined) {
    if (fields.redirectUri === undefined) {
      refuse(
        `a ${String(fields.grantType)} client needs a redirectUri (only device_code and client_credentials clients have none)`,
      );
    }
    const privateUseScheme = fields.grantType === 'authorization_code' && fields.public === true;
    out.redirectUri = checkRedirectUri(fields.redirectUri, 'redirectUri', privateUseScheme);
  }
  if (fields.scopes !== undefined) {
    out.scopes = checkScopes('scopes', fields.scopes, context);
  }
  if (fields.defaultScopes !== undefined && fields.defaultScopes !== null) {
    const defaults = checkScopes('defaultScopes', fields.defaultScopes, context);
    const allowed = out.scopes ?? fields.scopes ?? currentScopes;
    const outside = defaults.find((scope) => !allowed.includes(scope));
    if (outside !== undefined) refuse(`defaultScopes: ${outside} is not one of the client's scopes`);
    out.defaultScopes = defaults;
  }
  if (fields.contacts !== undefined) {
    if (!Array.isArray(fields.contacts) || fields.contacts.some((c) => typeof c !== 'string' || !c.trim())) {
      refuse('contacts must be a list of non-empty strings (e-mail addresses, say)');
    }
    out.contacts = fields.contacts;
  }
  if (fields.postLogoutRedirectUris !== undefined) {
    if (!Array.isArray(fields.postLogoutRedirectUris)) {
      refuse('postLogoutRedirectUris must be a list of redirect URIs');
    }
    out.postLogoutRedirectUris = [
      ...new Set(fields.postLogoutRedirectUris.map((uri) => checkRedirectUri(uri, 'postLogoutRedirectUris'))),
    ];
  }
  if (fields.allowedTeams !== undefined) {
    const teams = fields.allowedTeams;
    if (clientCredentials && Array.isArray(teams) && teams.length > 0) {
      refuse(
        'allowedTeams gates the members who authorize a client: a client_credentials client acts for none',
      );
    }
    if (
      !Array.isArray(teams) ||
      teams.length > 50 ||
      teams.some((team) => typeof team !== 'string' || !TEAM_NAME.test(team))
    ) {
      refuse(
        `allowedTeams must list at most 50 Launchpad team names, lowercase and without ~ (got ${JSON.stringify(teams)})`,
      );
    }
    out.allowedTeams = [...new Set(teams)];
  }
  if (fields.resources !== undefined) {
    const resources = fields.resources;
    if (
      !Array.isArray(resources) ||
      resources.length > 20 ||
      resources.some((uri) => typeof uri !== 'string' || resourceKey(uri) === undefined)
    ) {
      refuse(
        `resources must list at most 20 resource URIs, each absolute and without a fragment (got ${JSON.stringify(resources)})`,
      );
    }
    out.resources = [...new Set(resources)];
  }
  return out;
}

function checkScopes(field: string, scopes: unknown, context: RegistrationContext): string[] {
  if (!Array.isArray(scopes) || scopes.length === 0) {
    throw new TypeError(
      `openid-oauth-bridge: ${field} must list at least one scope (got ${JSON.stringify(scopes)}), e.g. ['realms']`,
    );
  }
  for (const scope of scopes) {
    if (typeof scope !== 'string' || !SCOPE_TOKEN.test(scope)) {
      throw new TypeError(
        `openid-oauth-bridge: ${field}: ${JSON.stringify(scope)} is not a scope (RFC 6749 3.3: printable ASCII without spaces, quotes or backslashes; list each scope on its own)`,
      );
    }
  }
  const offered = context.offeredScopes ?? [];
  const unknown = offered.length === 0 ? undefined : scopes.find((scope) => !offered.includes(scope));
  if (unknown !== undefined) {
    throw new TypeError(
      `openid-oauth-bridge: ${field}: ${JSON.stringify(unknown)} is not a scope the server offers (${offered.join(', ')}); add it to the server's scopes option first`,
    );
  }
  return [...new Set(scopes as string[])];
}

/** A redirect URI a client may be registered with: see {@link registeredRedirectUriProblem}. */
function checkRedirectUri(uri: unknown, field = 'redirectUri', privateUseScheme = false): string {
  if (typeof uri !== 'string') {
    throw new TypeError(`openid-oauth-bridge: ${field} ${JSON.stringify(uri)} must be a string`);
  }
  const problem = registeredRedirectUriProblem(uri, { privateUseScheme });
  if (problem) throw new TypeError(`openid-oauth-bridge: ${field} ${JSON.stringify(uri)} ${problem}`);
  return uri;
}
