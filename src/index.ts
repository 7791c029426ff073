/**
 * openid-oauth-bridge: an OAuth 2.0 authorization server for Express whose end users log in at
 * OpenID 2.0 providers.
 *
 * @packageDocumentation
 */
export { createAuthorizationServer, type AuthorizationServer, type EndpointUrls } from './server.js';
export type {
  AuthorizationServerOptions,
  ErrorContext,
  ErrorHook,
  LoginOptions,
  Logger,
  ProviderOptions,
  RateLimitOptions,
  ResolvedOptions,
  SessionOptions,
  TokenOptions,
} from './config/options.js';
export { oauthRouter, type OAuthRouterOptions } from './endpoints/oauth-router.js';
export { authorizeRouter } from './endpoints/authorize/router.js';
export type { LoginIdentity } from './endpoints/authorize/login.js';
export { tokenRouter } from './endpoints/token/router.js';
export { applicationsRouter } from './endpoints/applications.js';
export { discoveryRouter, type RootResource } from './endpoints/discovery.js';
export {
  metadataRouter,
  authorizationServerMetadata,
  type AuthorizationServerMetadata,
  type MetadataOptions,
} from './endpoints/metadata.js';
export { revocationRouter } from './endpoints/revocation.js';
export {
  introspectionRouter,
  type IntrospectionResponse,
  type IntrospectionRouterOptions,
} from './endpoints/introspection.js';
export { ServerEvents } from './events/emitter.js';
export type * from './events/types.js';
export {
  requireBearer,
  bearerOf,
  type BearerContext,
  type BearerLocals,
  type RequireBearerOptions,
} from './endpoints/bearer.js';
export {
  OAuthError,
  STATUS_BY_CODE,
  type OAuthErrorCode,
  type OAuthErrorOptions,
} from './errors/oauth-error.js';
export {
  registerClient,
  rotateClientSecret,
  updateClient,
  ClientIdTakenError,
  SUPPORTED_GRANT_TYPES,
  type ClientRegistration,
  type ClientUpdate,
  type IssuedClient,
  type RegistrationContext,
} from './clients/register.js';
export {
  authorizedApplications,
  revokeApplication,
  type AuthorizedApplication,
} from './applications/authorized.js';
export {
  StorageUnavailableError,
  type StorageUnavailableErrorOptions,
} from './errors/storage-unavailable.js';
export { closeGracefully, type CloseGracefullyOptions, type CloseGracefullyResult } from './http/shutdown.js';
export { redirectUriMatches, registeredRedirectUriProblem } from './clients/redirect-uri.js';
export { memoryStorage, memoryEphemeralStore, type MemoryStorage } from './storage/memory.js';
export {
  sqlStorage,
  connectStorage,
  migrations,
  type SqlStorage,
  type SqlDialectName,
  type SqlDatabaseHandle,
  type ConnectStorageOptions,
} from './storage/sql/index.js';
export { DatabaseError, type DatabaseFailure } from './storage/sql/connect.js';
export { AdapterSessionStore } from './session/adapter-store.js';
export type * from './storage/types.js';
export type * from './pages/types.js';
export { defaultPages } from './pages/default-pages.js';
export { html, SafeHtml } from './pages/html.js';
export {
  RelyingParty,
  OpenIdLoginError,
  OpenIdStrategy,
  type OpenIdProvider,
  type RelyingPartyOptions,
} from './login/openid/index.js';
