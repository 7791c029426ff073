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
  /** CSRF token of the sign-out forms, bound to this session. */
  logoutCsrf?: string;
  /** When this session started (the server's clock, epoch ms): it ends at the absolute lifetime. */
  startedAt?: number;
}

/** Where the library keeps its part of the session. */
export const LIBRARY_STATE_KEY = 'openidOAuthBridge';
const KEY = LIBRARY_STATE_KEY;

/** What a request without the library's session state reads: nothing, and it stays nothing. */
const NONE: Readonly<BridgeSessionState> = Object.freeze({});

/**
 * The library's part of the session, for reading. Reading never creates or changes it, so a
 * visitor who only reads (an error page, a selection page) gets no session row and no cookie
 * (express-session's `saveUninitialized: false` then has nothing to save).
 */
export function readSessionState(req: Request): Readonly<BridgeSessionState> {
  const store = req.session as unknown as Record<string, BridgeSessionState | undefined> | undefined;
  return store?.[KEY] ?? NONE;
}

/**
 * The library's part of the session, for writing: created on first use, stamped with `now` (the
 * start of its absolute lifetime).
 */
export function writableSessionState(req: Request, now: number): BridgeSessionState {
  const store = req.session as unknown as Record<string, BridgeSessionState | undefined>;
  return (store[KEY] ??= { startedAt: now });
}

/** Ends the pending request: once answered, its consent form cannot be replayed. */
export function clearPending(req: Request): void {
  const state = (req.session as unknown as Record<string, BridgeSessionState | undefined> | undefined)?.[KEY];
  if (!state) return;
  delete state.pending;
  delete state.csrf;
}

/** The library's part of session data read from the store, without changing it. */
export function sessionStateOf(data: object): BridgeSessionState {
  return (data as Record<string, BridgeSessionState | undefined>)[KEY] ?? {};
}
