/**
 * openid-oauth-bridge: an OAuth 2.0 authorization server for Express whose end users log in at
 * OpenID 2.0 providers.
 *
 * This entry holds what an app mounting the server uses: the server and its options, the routers,
 * the bearer-token guard, client registration, storage and the errors an app catches. Replacing
 * the HTML pages is `openid-oauth-bridge/pages`; the OpenID 2.0 relying party's own building
 * blocks are `openid-oauth-bridge/openid`; a storage adapter's contract is
 * `openid-oauth-bridge/storage`; tests use `openid-oauth-bridge/testing`.
 *
 * @packageDocumentation
 */

// The server and its options. The options' nested objects are typed through the options
// themselves (`AuthorizationServerOptions['session']`); the types here are those an app writes
// outside the options object: a list of providers, a hook in a module of its own, a logger.
// Every type an exported function takes or returns is exported too, here or from a subpath
// (test/package/named-types.test.ts), so an app can name the options it builds apart from a call.
export { createAuthorizationServer } from './server.js';
export type { AuthorizationServer } from './config/server.js';
export type { AuthorizationServerOptions, ErrorHook, Logger, ProviderOptions } from './config/types.js';
export type { AccountsHook, AuthenticatedAccountHook, VerifiedLogin } from './login/accounts.js';
export type { LoginIdentity } from './endpoints/login/run-login.js';
export { steam, launchpad, ubuntuOne, openid } from './login/openid/presets.js';

// Mounting: `oauthRouter` mounts every endpoint; the others let an app mount them one by one.
export {
  oauthRouter,
  authorizeRouter,
  tokenRouter,
  discoveryRouter,
  developerRouter,
  type OAuthRouterOptions,
} from './endpoints/routers.js';
export { metadataRouter, type MetadataOptions } from './endpoints/discovery/metadata.js';
export {
  requireBearer,
  bearerOf,
  type BearerContext,
  type BearerLocals,
  type RequireBearerOptions,
} from './endpoints/bearer/require-bearer.js';
export { closeGracefully, type CloseGracefullyOptions, type CloseGracefullyResult } from './http/shutdown.js';

// Clients and the end user's authorized applications.
export {
  registerClient,
  rotateClientSecret,
  ClientIdTakenError,
  type ClientRegistration,
  type IssuedClient,
  type RegistrationContext,
  type RegistrationTarget,
} from './clients/register.js';
export { updateClient, type ClientUpdate } from './clients/update.js';
export {
  authorizedApplications,
  revokeApplication,
  type AuthorizedApplication,
} from './endpoints/applications/list.js';

// Events and errors.
export type { ServerEvent, ServerEventOf } from './events/types.js';
export { OAuthError, type OAuthErrorCode, type OAuthErrorOptions } from './errors/oauth-error.js';
export {
  StorageUnavailableError,
  type StorageUnavailableErrorOptions,
} from './errors/storage-unavailable.js';
export { DatabaseError, type DatabaseFailure } from './storage/sql/connect.js';

// Storage: the built-in adapters. The contract a custom adapter implements, its stores and records,
// and the SQL adapter over a handle of the app's own are `openid-oauth-bridge/storage`.
export { memoryStorage, type MemoryStorage } from './storage/memory.js';
export { connectStorage, type ConnectStorageOptions } from './storage/sql/connect.js';
export type { Storage, ClientRecord } from './storage/types.js';
