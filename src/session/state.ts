import type { AccountClaims, UserRecord } from '../storage/types.js';

/**
 * The signed-in user, as the session keeps it. `id` is the account tokens and consents are issued
 * to: the library's user id, or the host's account id when `accounts` maps logins to it.
 */
export type SessionUser = Pick<UserRecord, 'id' | 'identifier' | 'provider'> & {
  /** Shown on the pages: the account's display name, else the identifier. */
  displayName?: string;
  /** Signed in by the host's own login (`authenticatedAccount`), not at a provider here. */
  viaHost?: boolean;
  /** When the user logged in at the provider (the server's clock, epoch ms): OpenID Connect's `auth_time`. */
  authTime?: number;
  /**
   * The account's claims from that login (`steam_id`, `name`, `preferred_username`, `picture`,
   * `profile`, `groups`): what ID tokens release, and the picture the pages show.
   */
  claims?: AccountClaims;
  /**
   * The teams the host says a user it signed in belongs to (`authenticatedAccount`), as it said
   * on this request: saved with the account's claims, where every team gate reads them. Never
   * kept in the session; a provider login's teams are in its saved claims only.
   */
  hostTeams?: string[];
};

/** The signed-in user's avatar, an https URL (the `picture` of its latest login), for the pages. */
export function pictureOf(user: SessionUser): { picture?: string } {
  const picture = user.claims?.picture;
  return typeof picture === 'string' && picture.startsWith('https://') ? { picture } : {};
}

/**
 * A validated authorization request waiting for login or consent: one that goes back to the
 * client's redirect URI ({@link PendingRedirect}), or a device's ({@link PendingDevice}). The two
 * share the sign-in, freshness, team gate and consent page; each ends in its own step.
 */
export type PendingAuthorization = PendingRedirect | PendingDevice;

/** What every pending authorization has. */
interface PendingCommon {
  /** Random id carried by the consent form, tying a decision to this very request. */
  id: string;
  clientId: string;
  scopes: string[];
  /** The resource (RFC 8707) asked for, or the default one; absent: none. */
  resource?: string;
  /**
   * OpenID Connect's `prompt=none`: never a page, an error at the redirect URI instead; and
   * `prompt=consent`: the consent page even for a client already trusted.
   */
  prompt?: 'none' | 'consent';
  /**
   * A login at least this recent is required (epoch ms): `prompt=login` (the request's time) or
   * `max_age` (the request's time less it). An older one is not signed in for this request.
   */
  loginSince?: number;
  createdAt: number;
}

/** A request of the authorization endpoint, answered at the client's verified redirect URI. */
export interface PendingRedirect extends PendingCommon {
  kind: 'redirect';
  responseType: 'code' | 'token';
  /** The verified redirect URI. */
  redirectUri: string;
  state: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: 'S256' | null;
  /** OpenID Connect's `nonce`, returned in the ID token as sent. */
  nonce?: string;
  /**
   * The user an `id_token_hint` names (its `sub`): only that user counts as signed in for this
   * request, when it arrives and when it resumes after a login (OpenID Connect Core 3.1.2.1).
   */
  hintSubject?: string;
}

/**
 * A device's request (RFC 8628), its user code typed on the verification page: answered by
 * recording the person's decision for the device's next poll, never by a redirect.
 */
export interface PendingDevice extends PendingCommon {
  kind: 'device';
  /** The hash of the device code, and the user code the pages show. */
  device: { hash: string; userCode: string };
}

/** {@link BridgeSessionState.developerDraft}. */
export interface DeveloperDraft {
  /** The page to go back to after the sign-in: the form's own page. */
  returnTo: string;
  /** The account that filled it in: it comes back for that account only. */
  userId: string;
  /** The form's fields as the member sent them (names and URIs, never a secret). */
  fields: Record<string, string>;
}

/** What the library keeps in its own session. */
export interface BridgeSessionState {
  /** The signed-in user. */
  user?: SessionUser;
  pending?: PendingAuthorization;
  /** CSRF token of the consent form, bound to this session. */
  csrf?: string;
  /** The account the consent page was shown to: a decision for another account is refused. */
  consentFor?: string;
  /**
   * What the login in progress is for: the id of the pending authorization it was started for
   * (the code is issued for that request only, never one swapped in meanwhile), or a page
   * (`applications`, `developers`).
   */
  loginFor?: string;
  /** A one-time notice for the next page (post/redirect/get): never taken from the URL. */
  notice?: { revoked: string };
  /** CSRF token of the authorized-applications page's revoke forms. */
  applicationsCsrf?: string;
  /** CSRF token of the developer page's forms, bound to this session. */
  developerCsrf?: string;
  /**
   * A developer page form that needed a more recent sign-in (creating or rotating a secret): kept
   * across the sign-in at the provider, shown again filled in afterwards. Never holds a secret.
   */
  developerDraft?: DeveloperDraft;
  /** A one-time notice of the developer page (post/redirect/get): what was just done. */
  developerNotice?: string;
  /** CSRF token of the sign-out forms, bound to this session. */
  logoutCsrf?: string;
  /**
   * Where an OpenID Connect RP-initiated logout sends the browser once the user signs out: a
   * verified post-logout redirect URI and the relying party's `state`.
   */
  endSession?: { redirectUri: string; state?: string };
  /** When this session started (the server's clock, epoch ms): it ends at the absolute lifetime. */
  startedAt?: number;
  /** When it was last used, to a hundredth of the idle timeout: it ends that long after. */
  lastSeenAt?: number;
}

/** Session key under which the OpenID login state is kept between redirect and callback. */
export const LOGIN_SESSION_KEY = 'openidOAuthBridgeLogin';

/** Where the library keeps its part of the session. */
export const LIBRARY_STATE_KEY = 'openidOAuthBridge';
