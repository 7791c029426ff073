import type { Request } from 'express';
import type { UserRecord } from '../storage/types.js';

/** The signed-in user, as the session keeps it. */
export type SessionUser = Pick<UserRecord, 'id' | 'identifier' | 'provider'>;

/** A validated authorization request waiting for login or consent. */
export interface PendingAuthorization {
  /** Random id carried by the consent form, tying a decision to this very request. */
  id: string;
  clientId: string;
  redirectUri: string;
  responseType: 'code' | 'token';
  state: string | null;
  scopes: string[];
  codeChallenge: string | null;
  codeChallengeMethod: 'S256' | null;
  createdAt: number;
}

/** What the library keeps in its own session. */
export interface BridgeSessionState {
  /** The signed-in user. */
  user?: SessionUser;
  pending?: PendingAuthorization;
  /** CSRF token of the consent form, bound to this session. */
  csrf?: string;
  /** A sign-in begun from the authorized-applications page rather than an authorization. */
  signInFor?: 'applications';
  /** CSRF token of the authorized-applications page's revoke forms. */
  applicationsCsrf?: string;
}

const KEY = 'openidOAuthBridge';

/** Ends the pending request: once answered, its consent form cannot be replayed. */
export function clearPending(state: BridgeSessionState): void {
  delete state.pending;
  delete state.csrf;
}

/** The library's part of the session, created on first use. */
export function sessionState(req: Request): BridgeSessionState {
  const store = req.session as unknown as Record<string, BridgeSessionState | undefined>;
  return (store[KEY] ??= {});
}

/** The library's part of session data read from the store, without changing it. */
export function sessionStateOf(data: object): BridgeSessionState {
  return (data as Record<string, BridgeSessionState | undefined>)[KEY] ?? {};
}
