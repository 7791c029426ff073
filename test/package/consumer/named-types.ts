// An app that names the types of the public API's signatures: the options it builds apart from the
// call, the results it keeps. test/package/named-types.test.ts compiles it with `tsc --strict` under
// moduleResolution node16 and bundler, and checks it imports every such type the API has.
import type { Server } from 'node:http';
import {
  closeGracefully,
  createAuthorizationServer,
  launchpad,
  memoryStorage,
  metadataRouter,
  OAuthError,
  registerClient,
  requireBearer,
  steam,
  StorageUnavailableError,
  type AuthorizationServer,
  type AuthorizationServerOptions,
  type AuthorizedApplication,
  type BearerContext,
  type ClientIdTakenError,
  type ClientRecord,
  type ClientRegistration,
  type ClientUpdate,
  type CloseGracefullyOptions,
  type CloseGracefullyResult,
  type ConnectStorageOptions,
  type DatabaseError,
  type DatabaseFailure,
  type IssuedClient,
  type MemoryStorage,
  type MetadataOptions,
  type OAuthErrorCode,
  type OAuthErrorOptions,
  type OAuthRouterOptions,
  type RegistrationContext,
  type RegistrationTarget,
  type RequireBearerOptions,
  type Storage,
  type StorageUnavailableErrorOptions,
} from 'openid-oauth-bridge';
import { type EphemeralStore, type SqlDatabaseHandle, type SqlStorage } from 'openid-oauth-bridge/storage';
import { html, type Interpolation, type SafeHtml } from 'openid-oauth-bridge/pages';
import type {
  GenericProviderOptions,
  LaunchpadOptions,
  LoginState,
  OpenIdLoginError,
  OpenIdLoginErrorKind,
  OpenIdProvider,
  OpenIdStrategy,
  OpenIdStrategyOptions,
  ProviderPreset,
  RelyingParty,
  RelyingPartyOptions,
  SteamOptions,
  VerifiedIdentity,
} from 'openid-oauth-bridge/openid';
import type {
  AroundCall,
  ConformanceStats,
  ConformanceTestApi,
  DevelopmentProviderOptions,
  EphemeralStoreConformanceOptions,
  FaultyStorage,
  RunningDevelopmentProvider,
  RunningSteamWebApi,
  SteamWebApiOptions,
  StorageConformanceOptions,
} from 'openid-oauth-bridge/testing';
import type { RedisEphemeralClient, RedisEphemeralStoreOptions } from 'openid-oauth-bridge/redis';

// The options of a call, written apart from it.
const storage: MemoryStorage = memoryStorage();
const steamOptions: SteamOptions = { webApi: { key: 'k' } };
const launchpadOptions: LaunchpadOptions = { teams: ['ubuntu-core-dev'] };
const presets: ProviderPreset[] = [steam(steamOptions), launchpad(launchpadOptions)];
const options: AuthorizationServerOptions = {
  baseUrl: 'https://auth.example.com',
  storage,
  providers: presets,
  session: { secret: 'a'.repeat(32) },
};
const server: AuthorizationServer = createAuthorizationServer(options);
const bearerOptions: RequireBearerOptions = { scopes: ['realms:read'], teams: true };
export const guard = requireBearer(server, bearerOptions);
const metadataOptions: MetadataOptions = { serviceDocumentation: 'https://example.com/docs' };
export const metadata = metadataRouter(server, metadataOptions);
export const routerOptions: OAuthRouterOptions = { introspection: false };

// Registration, on the server or on a storage alone.
const target: RegistrationTarget = server;
const context: RegistrationContext = {};
const registration: ClientRegistration = {
  applicationName: 'Photo printer',
  redirectUri: 'https://app.example/cb',
};
export const issued: Promise<IssuedClient> = registerClient(target, registration, context);

// Errors an app throws.
const oauthErrorOptions: OAuthErrorOptions = { cause: new Error('x') };
const code: OAuthErrorCode = 'invalid_request';
export const oauthError = new OAuthError(code, 'bad', oauthErrorOptions);
const outageOptions: StorageUnavailableErrorOptions = { retryAfterSeconds: 5 };
export const outage = new StorageUnavailableError('down', outageOptions);
export const failureOf = (error: DatabaseError): DatabaseFailure => error.failure;

// Shutting down.
export async function stop(http: Server): Promise<boolean> {
  const shutdown: CloseGracefullyOptions = { storage: { close: () => undefined }, timeoutMs: 5_000 };
  const result: CloseGracefullyResult = await closeGracefully(http, shutdown);
  return result.timedOut;
}

// A page's template.
const shown: Interpolation = 'Photo printer';
export const page: SafeHtml = html`<h1>${shown}</h1>`;

/** Every other type a signature names, named once. */
export type Named = [
  AuthorizedApplication,
  BearerContext,
  ClientIdTakenError,
  ClientRecord,
  ClientUpdate,
  ConnectStorageOptions,
  EphemeralStore,
  SqlDatabaseHandle,
  SqlStorage,
  Storage,
  GenericProviderOptions,
  LoginState,
  OpenIdLoginError,
  OpenIdLoginErrorKind,
  OpenIdProvider,
  OpenIdStrategy,
  OpenIdStrategyOptions,
  RelyingParty,
  RelyingPartyOptions,
  VerifiedIdentity,
  AroundCall,
  ConformanceStats,
  ConformanceTestApi,
  DevelopmentProviderOptions,
  EphemeralStoreConformanceOptions,
  FaultyStorage,
  RunningDevelopmentProvider,
  RunningSteamWebApi,
  SteamWebApiOptions,
  StorageConformanceOptions,
  RedisEphemeralClient,
  RedisEphemeralStoreOptions,
];
