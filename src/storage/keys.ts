/**
 * The keys and values the library keeps in the {@link EphemeralStore}. One place, so that the
 * library and an operator reading a Redis keyspace agree on them.
 *
 * @internal
 */

import type { AccountClaims } from './types.js';

/** Length-prefixed, so that two parts never join to the same key as two other parts. */
const pair = (a: string, b: string) => `${a.length}:${a}${b}`;

export const ephemeralKeys = {
  /**
   * An authorization code: its {@link StoredCode} as JSON while unused; once exchanged, its
   * {@link UsedCode} in its place until the code would have expired (`ephemeral.replace`).
   */
  code: (codeHash: string) => `code:${codeHash}`,
  /** An express-session session: its JSON. */
  session: (sid: string) => `session:${sid}`,
  /** An OpenID 2.0 response nonce of one OP endpoint (`scope`). */
  nonce: (scope: string, nonce: string) => `nonce:${pair(scope, nonce)}`,
  /**
   * A rate-limit counter; `key` is `client:<client_id>` or `address:<ip>` (failed client
   * authentications), `register:<minute|hour>:<ip>` (dynamic registrations), or
   * `developer-create:<account id>` (applications a member created this hour).
   */
  rateLimit: (key: string) => `rate:${key}`,
  /** A grant revoked recently: a consent racing the revocation must not bring it back. */
  revokedGrant: (grantId: string) => `revoked-grant:${grantId}`,
  /**
   * A revocation of the grant reported: added once after the grant is saved revoked, so that of
   * requests revoking it at once exactly one reports it.
   */
  revocationReported: (grantId: string) => `revocation-reported:${grantId}`,
  /**
   * The id of the grant a `client_credentials` client's next tokens start, when none stands:
   * added once, so that racing first requests start one grant. `basis` names what it follows (the
   * client's registration, or its grant that was revoked): a new one for each.
   */
  clientGrant: (clientId: string, basis: string) => `client-grant:${pair(clientId, basis)}`,
  /** The commit point of a refresh token rotation: exactly one caller adds it. */
  rotated: (tokenHash: string) => `rotated:${tokenHash}`,
  /** An account's public profile as its provider's profile source read it (or why not). */
  profile: (provider: string, accountKey: string) => `profile:${pair(provider, accountKey)}`,
  /** A device authorization request (RFC 8628): its {@link StoredDevice}, taken by the successful poll. */
  device: (deviceCodeHash: string) => `device:${deviceCodeHash}`,
  /** A user code not yet answered: the hash of its device code. */
  deviceUserCode: (userCodeHash: string) => `device-user:${userCodeHash}`,
  /** The person's answer to a device request, added once: its {@link DeviceDecision}. */
  deviceDecision: (deviceCodeHash: string) => `device-decision:${deviceCodeHash}`,
  /** When the device may poll next, and at what interval: its {@link DevicePoll}. */
  devicePoll: (deviceCodeHash: string) => `device-poll:${deviceCodeHash}`,
  /**
   * A developer page form that makes a secret (create, rotate), sent: the hash of its one-time
   * submission id. A second send of the same form (a reload) makes and shows nothing.
   */
  developerForm: (submissionHash: string) => `developer-form:${submissionHash}`,
} as const;

/** A device authorization request as stored under {@link ephemeralKeys.device}. */
export interface StoredDevice {
  clientId: string;
  scopes: string[];
  /** The resource (RFC 8707) the device asked for, or the default one; absent: none. */
  resources?: string[];
  /** The user code, as shown (`WDJB-MJHT`). */
  userCode: string;
  createdAt: number;
  /** When the device code and the user code expire (`expires_in`); the entry is kept longer, to say so. */
  expiresAt: number;
  /** The polling interval first given, in seconds. */
  interval: number;
}

/** The person's answer, under {@link ephemeralKeys.deviceDecision}. */
export type DeviceDecision =
  | { approved: false; userId: string }
  | {
      approved: true;
      userId: string;
      /** The grant the consent recorded: the tokens belong to it. */
      grantId: string;
      /** OpenID Connect: the login's time and the account's claims. */
      authTime?: number;
      claims?: AccountClaims;
    };

/** The pace of a device's polling, under {@link ephemeralKeys.devicePoll}. */
export interface DevicePoll {
  /** The interval now, in seconds: the first one, plus 5 for each `slow_down`. */
  interval: number;
  /** The earliest time of the next poll (epoch ms). */
  next: number;
}

/** An authorization code as stored under {@link ephemeralKeys.code}. */
export interface StoredCode {
  clientId: string;
  userId: string;
  /** The redirect URI of the authorization request; the token request must repeat it. */
  redirectUri: string;
  scopes: string[];
  /** The resource (RFC 8707) of the authorization request, or the default one; absent: none. */
  resources?: string[];
  /** The grant (user and client) every token issued from this code belongs to. */
  grantId: string;
  /** PKCE (RFC 7636) challenge, if the request carried one. */
  codeChallenge: string | null;
  codeChallengeMethod: 'S256' | null;
  /** OpenID Connect: the request's `nonce`, the login's time and the account's claims. */
  nonce?: string;
  authTime?: number;
  claims?: AccountClaims;
  createdAt: number;
  expiresAt: number;
}

/** What is remembered of an exchanged code, under its {@link ephemeralKeys.code} in its place. */
export interface UsedCode {
  /** Tells it from a {@link StoredCode}. */
  used: true;
  grantId: string;
  clientId: string;
  userId: string;
}
