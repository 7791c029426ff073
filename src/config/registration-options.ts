import type { Request } from 'express';

/*
 * The options of the ways clients register other than the operator's: by themselves (dynamic
 * registration, RFC 7591) and by members on the developer page. Part of the server's options
 * (src/config/types.ts).
 */

/** {@link AuthorizationServerOptions.dynamicRegistration}. */
export interface DynamicRegistrationOptions {
  /**
   * Initial access tokens (RFC 7591 3), sent as `Authorization: Bearer <token>`: a list (each at
   * least 16 characters), or a function that says whether the one presented is good. A request
   * with one may register a confidential client, which gets a `client_secret`; one without may
   * register public clients only (`token_endpoint_auth_method: none`); one with a token that is
   * not good is refused (`401 invalid_token`). Default: none, public clients only.
   *
   * @example async (token) => (await db.registrationTokens.find(token)) !== null
   */
  initialAccessTokens?: string[] | InitialAccessTokenCheck;
  /**
   * The scopes a self-registered client may have, each offered by the server; its `scope`
   * metadata chooses among them (others are dropped), and without one it gets them all. Default:
   * every scope the server offers.
   */
  scopes?: string[];
  /**
   * Seconds a registration may stay unused (no token issued to it) before `storage.prune`
   * removes it, 60 to 2592000. Default `86400` (a day).
   */
  unusedTtl?: number;
  /**
   * Registrations from one address (`req.ip`; an IPv6 address counts per /56) before `429` with
   * `Retry-After`, successful or not: a burst per minute and a sustained rate per hour. `false`:
   * no limit. Default `{ maxPerMinute: 20, maxPerHour: 200 }`.
   */
  rateLimit?: false | { maxPerMinute?: number; maxPerHour?: number };
}

/**
 * Whether an initial access token presented at the registration endpoint is good: what it throws is
 * reported as a 500, and the registration is refused.
 */
export type InitialAccessTokenCheck = (token: string, req: Request) => boolean | Promise<boolean>;

/** {@link AuthorizationServerOptions.developerApps}. */
export interface DeveloperAppsOptions {
  /** Applications one member may have, 1 to 1000. Default `10`. */
  maxAppsPerMember?: number;
  /**
   * A member's new application waits for the operator's approval (CLI `clients approve`) before
   * it can be used. Default `false`.
   */
  requireApproval?: boolean;
  /**
   * Members an application the operator has not verified (CLI `clients verify`) may be authorized
   * by; the next one is refused with `access_denied`. `false`: no cap. Default `100`.
   */
  unverifiedReach?: number | false;
  /** The scopes a member's application may have, each offered by the server. Default: every one. */
  scopes?: string[];
  /**
   * Minutes since the member's sign-in at the provider within which they may create or rotate a
   * secret; an older sign-in is sent to the provider first. 1 to 60. Default `5`.
   */
  recentLoginMinutes?: number;
  /**
   * The longest time, in minutes, a member may keep the old secret working after a rotation (so
   * their deployed app keeps running while they update it), 0 to 10080. Default `1440` (a day).
   */
  maxSecretOverlapMinutes?: number;
  /** Applications one member may create per hour, deleted ones included. Default `5`. */
  maxCreatedPerHour?: number;
}
