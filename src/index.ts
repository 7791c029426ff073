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
export {
  oauthRouter,
  authorizeRouter,
  tokenRouter,
  applicationsRouter,
  discoveryRouter,
  revocationRouter,
  introspectionRouter,
  type OAuthRouterOptions,
} from './endpoints/routers.js';
export type { LoginIdentity } from './endpoints/login/run-login.js';
export type {
  AccountDecision,
  AccountsHook,
  AuthenticatedAccountHook,
  HostAccount,
  VerifiedLogin,
} from './login/accounts.js';
export type { RootResource } from './endpoints/discovery/root.js';
export {
  metadataRouter,
  authorizationServerMetadata,
  type AuthorizationServerMetadata,
  type MetadataOptions,
} from './endpoints/discovery/metadata.js';
export type {
  IntrospectionResponse,
  IntrospectionRouterOptions,
} from './endpoints/introspection/endpoint.js';
export { ServerEvents } from './events/emitter.js';
export type * from './events/types.js';
export {
  requireBearer,
  bearerOf,
  type BearerContext,
  type BearerLocals,
  type RequireBearerOptions,
} from './endpoints/bearer/require-bearer.js';
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
} from './grants/applications.js';
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
  normalizeIdentifier,
  planClaimedIdMerge,
  steam,
  launchpad,
  ubuntuOne,
  openid,
  type ClaimedIdMerge,
  type ProviderPreset,
  type PresetOptions,
  type GenericProviderOptions,
  type VerifiedAssertion,
  type AccountOfLogin,
  type SregField,
  type OpenIdProvider,
  type RelyingPartyOptions,
  type VerifiedIdentity,
  type OpenIdLoginErrorKind,
  type OpenIdStrategyOptions,
  type OpenIdStrategyUser,
  type LoginState,
} from './login/openid/index.js';
export type { NonceStore } from './login/openid/options.js';
