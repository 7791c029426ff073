import { resourceKey } from '../rules/resources.js';
import { unofferedScope } from '../rules/scopes.js';
import { describeIssue } from './messages.js';
import { optionsSchema } from './options.js';
import type { AuthorizationServerOptions, ResolvedOptions } from './types.js';

/*
 * The options checked as a whole, once the schema (./options.ts) has checked each one: what one
 * option asks of another or of the storage (the claims store with OpenID Connect, the resources'
 * scopes among those offered, the profile against implicit clients, ...).
 */

/**
 * Validates options once, at start-up. A wrong option throws a `TypeError` naming its path, the
 * value given and what to do, as express-session does for its own options; an unknown option
 * throws too, with the closest known option as a suggestion.
 *
 * @internal
 */
export function resolveOptions(input: AuthorizationServerOptions): ResolvedOptions {
  if (typeof input !== 'object' || input === null) {
    throw new TypeError(
      'openid-oauth-bridge: createAuthorizationServer needs an options object: { baseUrl, storage, providers, session }',
    );
  }
  const result = optionsSchema.safeParse(input);
  if (!result.success) {
    const lines = result.error.issues.flatMap((issue) => describeIssue(issue, input, optionsSchema));
    throw new TypeError(`openid-oauth-bridge: invalid options\n${lines.map((l) => `  ${l}`).join('\n')}`);
  }
  const providers = result.data.providers;
  const seen = new Set<string>();
  for (const [index, provider] of providers.entries()) {
    for (const key of [provider.name, provider.identifier]) {
      if (seen.has(key))
        throw new TypeError(
          `openid-oauth-bridge: invalid options\n  providers.${index}: ${JSON.stringify(key)} appears twice; give each provider its own name and identifier`,
        );
      seen.add(key);
    }
  }
  const resolved = result.data as ResolvedOptions;
  checkClaimsStore(resolved);
  checkDocumentClientStore(resolved);
  if (resolved.oidc) {
    const { keys } = resolved.storage;
    if (
      resolved.oidc.keySecret !== undefined &&
      (typeof keys?.list !== 'function' || typeof keys.save !== 'function')
    ) {
      throw new TypeError(
        'openid-oauth-bridge: invalid options\n  oidc.keySecret: the storage has no keys store (keys.list, keys.save) to keep the signing keys in; use a built-in adapter, add one to yours, or give oidc.keys',
      );
    }
    // The OpenID Connect scopes are offered whenever the operator lists scopes at all.
    if (Object.keys(resolved.scopes).length > 0) resolved.scopes = { ...OIDC_SCOPES, ...resolved.scopes };
  }
  checkResources(resolved);
  checkProfile(resolved);
  checkDynamicRegistration(resolved);
  checkDeveloperApps(resolved);
  return resolved;
}

/**
 * The account's claims (`users.saveClaims`/`users.findClaims`) are where ID tokens, UserInfo and
 * every team gate read a login's facts: OpenID Connect and a provider asked about teams need them.
 * Without them the server would start, then answer `sub` alone and refuse every refresh of a
 * team-gated client, silently; so it does not start.
 */
function checkClaimsStore(resolved: ResolvedOptions): void {
  const { users } = resolved.storage;
  if (typeof users.saveClaims === 'function' && typeof users.findClaims === 'function') return;
  const teamsProvider = resolved.providers.findIndex((provider) => (provider.teams?.length ?? 0) > 0);
  const path = resolved.oidc ? 'oidc' : teamsProvider === -1 ? undefined : `providers.${teamsProvider}.teams`;
  if (path === undefined) return;
  throw new TypeError(
    `openid-oauth-bridge: invalid options\n  ${path}: the storage has no users.saveClaims and users.findClaims to keep each account's claims and teams in; use a built-in adapter or add the pair to yours (docs/storage.md)`,
  );
}

/** Declared resources are distinct, at most one is the default, and their scopes are offered. */
function checkResources(resolved: ResolvedOptions): void {
  const refuse = (index: number, message: string) =>
    new TypeError(`openid-oauth-bridge: invalid options\n  resources.${index}: ${message}`);
  const seen = new Set<string>();
  let fallback: number | undefined;
  for (const [index, declared] of resolved.resources.entries()) {
    const key = resourceKey(declared.resource)!;
    if (seen.has(key)) throw refuse(index, `${JSON.stringify(declared.resource)} is declared twice`);
    seen.add(key);
    if (declared.default) {
      if (fallback !== undefined) {
        throw refuse(index, `only one resource may be the default (resources.${fallback} is)`);
      }
      fallback = index;
    }
    // A JWT access token is signed with the OpenID Connect keys: without them there is nothing
    // to sign with, and every token request for the resource would fail.
    if (declared.accessTokenFormat === 'jwt' && !resolved.oidc) {
      throw refuse(
        index,
        "accessTokenFormat 'jwt' needs the OpenID Connect signing keys: configure oidc (oidc.keySecret or oidc.keys), or leave accessTokenFormat out for opaque tokens",
      );
    }
    const unknown = unofferedScope(resolved.scopes, declared.scopes ?? []);
    if (unknown !== undefined) {
      throw refuse(
        index,
        `scope ${JSON.stringify(unknown)} is not one the server offers (the scopes option)`,
      );
    }
  }
}

/**
 * OAuth 2.1 requires a public client's refresh tokens to be sender-constrained or rotated;
 * this server rotates them: the `oauth2.1` profile does not start with rotation turned off.
 */
function checkProfile(resolved: ResolvedOptions): void {
  if (resolved.profile !== 'oauth2.1' || resolved.tokens.rotateRefreshTokens !== false) return;
  throw new TypeError(
    "openid-oauth-bridge: invalid options\n  tokens.rotateRefreshTokens: false is refused with profile 'oauth2.1', which rotates the refresh tokens of public clients (OAuth 2.1); leave it out ('public-clients') or set it to true",
  );
}

/**
 * Dynamic registration writes clients (`clients.create`) and marks their first use
 * (`clients.update`): without them every registration would fail, so the server does not start.
 * Its scopes must be among those the server offers, when it names any.
 */
function checkDynamicRegistration(resolved: ResolvedOptions): void {
  const registration = resolved.dynamicRegistration;
  if (registration === false) return;
  const { clients } = resolved.storage;
  if (typeof clients.create !== 'function' || typeof clients.update !== 'function') {
    throw new TypeError(
      'openid-oauth-bridge: invalid options\n  dynamicRegistration: the storage has no clients.create and clients.update to register clients with; use a built-in adapter or add the pair to yours (docs/storage.md)',
    );
  }
  const offered = Object.keys(resolved.scopes);
  const unknown = registration.scopes?.find((scope) => offered.length > 0 && !offered.includes(scope));
  if (unknown !== undefined) {
    throw new TypeError(
      `openid-oauth-bridge: invalid options\n  dynamicRegistration.scopes: ${JSON.stringify(unknown)} is not a scope the server offers (${offered.join(', ')})`,
    );
  }
}

/** The developer page's scopes must be among those the server offers, when it names any. */
function checkDeveloperApps(resolved: ResolvedOptions): void {
  const offered = Object.keys(resolved.scopes);
  const unknown = resolved.developerApps.scopes?.find(
    (scope) => offered.length > 0 && !offered.includes(scope),
  );
  if (unknown !== undefined) {
    throw new TypeError(
      `openid-oauth-bridge: invalid options\n  developerApps.scopes: ${JSON.stringify(unknown)} is not a scope the server offers (${offered.join(', ')})`,
    );
  }
}

/**
 * A client named by its metadata document is kept in the clients store (a token is accepted only
 * with its client): the store must be able to create and update clients.
 */
function checkDocumentClientStore(resolved: ResolvedOptions): void {
  const { clients } = resolved.storage;
  if (!resolved.clientMetadataDocuments) return;
  if (typeof clients.create === 'function' && typeof clients.update === 'function') return;
  throw new TypeError(
    'openid-oauth-bridge: invalid options\n  clientMetadataDocuments: the storage has no clients.create and clients.update to keep the clients made from metadata documents in; use a built-in adapter or add them to yours (docs/storage.md)',
  );
}

/** The scopes OpenID Connect defines that this server serves (Core 3.1.2.1, 5.4), as the consent page describes them. */
export const OIDC_SCOPES: Readonly<Record<string, string>> = {
  openid: 'Sign you in: learn your account identifier here',
  profile:
    'Your name, nickname and picture (a Steam persona and avatar), your profile page and your team memberships, as your sign-in provider gives them',
};
