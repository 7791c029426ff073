/**
 * The events an authorization server reports, for a host's audit log or metrics. Every payload is
 * a plain object with a `type`; none ever carries a token, code, client secret, CSRF token or a
 * provider's response.
 */

import type { AppEvent } from './app-events.js';
import type { ServerEventBase } from './base.js';
import type { KeyEvent } from './key-events.js';
import type { OperatorClientEvent } from './operator-events.js';

export type { ServerEventBase } from './base.js';

export type * from './app-events.js';
export type * from './key-events.js';
export type * from './operator-events.js';

/** A user logged in at a provider (the OpenID assertion was verified). */
export interface LoginSucceededEvent extends ServerEventBase {
  type: 'login.succeeded';
  userId: string;
  /** Name of the configured provider. */
  provider: string;
  /** The client application the user is logging in for; absent for a sign-in to a page (the authorized applications, the developer page). */
  clientId?: string;
}

/** A login did not complete: cancelled at the provider, refused, or the provider failed. */
export interface LoginFailedEvent extends ServerEventBase {
  type: 'login.failed';
  clientId?: string;
  /** `failed`: refused or cancelled (the user sees "Try again"); `error`: an unexpected failure. */
  outcome: 'failed' | 'error';
  /** The message shown to the user (never a provider's raw response). */
  reason: string;
  /** Name of the configured provider the login was at, once the login knows it. */
  provider?: string;
}

/** The user trusted the application with these scopes (the consent page's "allow"). */
export interface ConsentGivenEvent extends ServerEventBase {
  type: 'consent.given';
  userId: string;
  clientId: string;
  scopes: string[];
}

/** The user refused the application on the consent page. */
export interface ConsentDeniedEvent extends ServerEventBase {
  type: 'consent.denied';
  userId: string;
  clientId: string;
}

/**
 * A user's trust in an application was withdrawn: its grant was revoked, and with it every token
 * and code of the user for that application.
 */
export interface ConsentRevokedEvent extends ServerEventBase {
  type: 'consent.revoked';
  userId: string;
  clientId: string;
  grantId: string;
  /** Who revoked it: the user on the applications page, or an operator (the CLI). */
  by: 'user' | 'operator';
}

/** An authorization code was issued (the redirect with `code` follows). */
export interface CodeIssuedEvent extends ServerEventBase {
  type: 'code.issued';
  clientId: string;
  userId: string;
  grantId: string;
  scopes: string[];
  /** Whether the request carried a PKCE `code_challenge`. */
  pkce: boolean;
}

/**
 * A code was presented a second time: its grant was revoked, with every token issued under it
 * (RFC 6749 4.1.2).
 */
export interface CodeReplayedEvent extends ServerEventBase {
  type: 'code.replayed';
  /** The client the code was issued to. */
  clientId: string;
  /** The client that presented it again (usually the same; another one is an attack). */
  presentedBy: string;
  userId: string;
  grantId: string;
}

/**
 * Access token (and, for the code and device grants, refresh token) issued for a new grant, or
 * a client's own access token (`client_credentials`).
 */
export interface TokenIssuedEvent extends ServerEventBase {
  type: 'token.issued';
  grantType: 'authorization_code' | 'device_code' | 'implicit' | 'client_credentials';
  clientId: string;
  /** The user; for a client's own token (`client_credentials`), the client's subject `client:<client_id>`. */
  userId: string;
  grantId: string;
  scopes: string[];
  /** The resources (RFC 8707) the access token is for; absent: none. */
  resources?: string[];
  /** Whether a refresh token was issued with it. */
  refreshToken: boolean;
}

/** A refresh token was exchanged for a new access token. */
export interface TokenRefreshedEvent extends ServerEventBase {
  type: 'token.refreshed';
  clientId: string;
  userId: string;
  grantId: string;
  scopes: string[];
  /** The resources (RFC 8707) the access token is for; absent: none. */
  resources?: string[];
  /** Whether a new refresh token replaced the presented one (`tokens.rotateRefreshTokens`). */
  rotated: boolean;
}

/**
 * A refresh token replaced by rotation was presented again: it has leaked, and the whole grant
 * was revoked (RFC 9700 4.14.2).
 */
export interface RefreshTokenReusedEvent extends ServerEventBase {
  type: 'refresh_token.reused';
  clientId: string;
  userId: string;
  grantId: string;
}

/**
 * An application registered itself at the registration endpoint (RFC 7591). Carries what it
 * registered, never its secret nor the initial access token.
 */
export interface ClientRegisteredEvent extends ServerEventBase {
  type: 'client.registered';
  clientId: string;
  /** The name it gave itself (`client_name`), or the one the library chose. */
  applicationName: string;
  redirectUri: string;
  scopes: string[];
  /** A public client (no secret); `false`: a confidential one, registered with an initial access token. */
  public: boolean;
  /** Whether the request carried a good initial access token. */
  initialAccessToken: boolean;
}

/** A client failed to authenticate (unknown, wrong or missing secret, disabled, implicit). */
export interface ClientAuthenticationFailedEvent extends ServerEventBase {
  type: 'client.authentication_failed';
  /** The `client_id` presented, if any; it may name no registered client. */
  clientId?: string;
  endpoint: 'token' | 'revocation' | 'introspection' | 'device_authorization';
  /**
   * The kind of the client the `client_id` names (how it came to be, then whether it keeps a
   * secret), `unknown` when it names none: a bounded word, what metrics count failures by.
   */
  clientKind: 'confidential' | 'public' | 'document' | 'dynamic' | 'member' | 'unknown';
}

/**
 * A client metadata document (`clientMetadataDocuments`) was refused: its URL, its host, its
 * address, the fetch, the document or your `acceptDocument` said no. Once per fetch, however many
 * requests waited for it; a refusal is not remembered, so the next request fetches again.
 */
export interface ClientDocumentRefusedEvent extends ServerEventBase {
  type: 'client_document.refused';
  /** The `client_id`: the document's URL. */
  clientId: string;
  /**
   * `client_id`: not a URL a document may have; `host`: `allowHosts`/`refuseHosts`; `address`:
   * the host is not at a public address; `fetch`: no answer within the limits (deadline, size) or
   * not a 200 (a redirect included); `document`: not a valid document; `policy`: `acceptDocument`.
   */
  reason: 'client_id' | 'host' | 'address' | 'fetch' | 'document' | 'policy';
  /** What was wrong, as the error page says it. */
  description: string;
}

/**
 * A client was made from its metadata document and saved in the clients store, or saved again
 * because its document changed (a new name, redirect URI or scope).
 */
export interface ClientDocumentSavedEvent extends ServerEventBase {
  type: 'client_document.saved';
  /** The `client_id`: the document's URL. */
  clientId: string;
  applicationName: string;
  redirectUris: string[];
  /** `true` the first time, `false` when a changed document updated it. */
  created: boolean;
}

/** A client revoked a token at the revocation endpoint (RFC 7009). */
export interface TokenRevokedEvent extends ServerEventBase {
  type: 'token.revoked';
  clientId: string;
  userId: string;
  grantId: string;
  /** The kind of token presented; its whole grant is revoked either way. */
  tokenType: 'access_token' | 'refresh_token';
}

/**
 * A login went on without the account's public profile (Steam's persona name and avatar): the
 * profile is private, or the source (the Steam Web API) failed, was slow or answered nonsense.
 * Never carries the source's URL or key.
 */
export interface ProfileUnavailableEvent extends ServerEventBase {
  type: 'profile.unavailable';
  /** The configured provider's name. */
  provider: string;
  /** The profile source, e.g. `Steam Web API`. */
  source: string;
  reason: 'private' | 'timeout' | 'too_large' | 'bad_status' | 'error' | 'malformed';
  /** The outcome of an earlier read, reused (cached) rather than asked again. */
  cached: boolean;
}

/** A device asked for a device code and a user code (RFC 8628 3.1). */
export interface DeviceRequestedEvent extends ServerEventBase {
  type: 'device.requested';
  clientId: string;
  scopes: string[];
}

/** A person approved a device's request on the verification page; its next poll gets the tokens. */
export interface DeviceAuthorizedEvent extends ServerEventBase {
  type: 'device.authorized';
  userId: string;
  clientId: string;
  scopes: string[];
  grantId: string;
}

/** A person denied a device's request on the verification page. */
export interface DeviceDeniedEvent extends ServerEventBase {
  type: 'device.denied';
  userId: string;
  clientId: string;
}

/**
 * A user code typed on the verification page matched no live request (wrong, expired or used), or
 * was not tried because its address (or everyone) typed too many wrong ones (`limited`).
 */
export interface DeviceUserCodeRejectedEvent extends ServerEventBase {
  type: 'device.user_code_rejected';
  limited: boolean;
}

/**
 * A client only some teams may use (`allowedTeams`) refused a person in none of them: at the
 * authorization or its consent decision, on the device verification page, or at a refresh (the
 * teams of the person's latest login).
 */
export interface TeamRefusedEvent extends ServerEventBase {
  type: 'team.refused';
  userId: string;
  clientId: string;
  /** The teams the client is for. */
  allowedTeams: string[];
  flow: 'authorization' | 'device' | 'refresh';
}

/**
 * A request was refused by one of the rate limits, with 429 and `Retry-After` (the device
 * verification page: its page again, with 429). Once per refused request.
 */
export interface RateLimitExceededEvent extends ServerEventBase {
  type: 'rate_limit.exceeded';
  /**
   * Which limit: `client_authentication` (failed client authentications, `rateLimit`),
   * `client_document_fetch` (`clientMetadataDocuments.maxFetchesPerMinute`), `registration`
   * (`dynamicRegistration.rateLimit`), `device_authorization` (`device.maxRequestsPerClient`),
   * `device_user_code` (user codes typed, `device.maxUserCodeAttempts`), `app_creation` (a
   * member's applications created per hour, `developerApps.maxCreatedPerHour`).
   */
  limit:
    | 'app_creation'
    | 'client_authentication'
    | 'client_document_fetch'
    | 'registration'
    | 'device_authorization'
    | 'device_user_code';
  /** What it counts under: an address, a `client_id`, a signed-in account, or everyone at once. */
  per: 'address' | 'client' | 'account' | 'everyone';
}

/** An unexpected failure answered with a 5xx (`server_error`, `temporarily_unavailable`). */
export interface ServerErrorEvent extends ServerEventBase {
  type: 'server.error';
  /**
   * Where it happened: each endpoint by its own name (`authorization` is `GET /oauth/authorize`,
   * `consent` the consent form's post, `login_callback` the provider's answer, ...), `requireBearer`
   * is `bearer`.
   */
  endpoint:
    | 'authorization'
    | 'authorization_resume'
    | 'consent'
    | 'device_verification'
    | 'login'
    | 'login_callback'
    | 'logout'
    | 'end_session'
    | 'applications'
    | 'applications_revoke'
    | 'developers'
    | 'developers_new'
    | 'developers_create'
    | 'developers_app'
    | 'developers_update'
    | 'developers_rotate'
    | 'developers_delete'
    | 'token'
    | 'revocation'
    | 'introspection'
    | 'device_authorization'
    | 'registration'
    | 'bearer'
    | 'jwks'
    | 'userinfo';
  /**
   * The status answered: 500 for a bug, 502 for a provider that does not answer, 503 for an
   * outage. Absent for a write after a commit point that failed: the request succeeded.
   */
  status?: number;
  /**
   * What was thrown, as thrown (usually by the storage adapter or a login strategy). The library
   * adds no request data to it; an adapter's own errors are the adapter's to keep free of secrets.
   */
  error: unknown;
}

/** Every event, discriminated by `type`. */
export type ServerEvent =
  | LoginSucceededEvent
  | LoginFailedEvent
  | ConsentGivenEvent
  | ConsentDeniedEvent
  | ConsentRevokedEvent
  | CodeIssuedEvent
  | CodeReplayedEvent
  | TokenIssuedEvent
  | TokenRefreshedEvent
  | RefreshTokenReusedEvent
  | ClientAuthenticationFailedEvent
  | ClientRegisteredEvent
  | ClientDocumentRefusedEvent
  | ClientDocumentSavedEvent
  | TokenRevokedEvent
  | ProfileUnavailableEvent
  | DeviceRequestedEvent
  | DeviceAuthorizedEvent
  | DeviceDeniedEvent
  | DeviceUserCodeRejectedEvent
  | TeamRefusedEvent
  | RateLimitExceededEvent
  | AppEvent
  | OperatorClientEvent
  | KeyEvent
  | ServerErrorEvent;

/** The name of an event, e.g. `'token.issued'`. */
export type ServerEventType = ServerEvent['type'];

/** The event of one type. */
export type ServerEventOf<T extends ServerEventType> = Extract<ServerEvent, { type: T }>;

/**
 * A listener. It runs synchronously after the fact, within the request; a returned promise is
 * not awaited. Whatever it throws or rejects with is logged, never passed to the request.
 */
export type ServerEventListener<T extends ServerEventType | '*' = '*'> = (
  event: T extends ServerEventType ? ServerEventOf<T> : ServerEvent,
) => void | Promise<void>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event as the library reports it: `at` is filled in from the server's clock. */
export type ServerEventInput = DistributiveOmit<ServerEvent, 'at'>;
