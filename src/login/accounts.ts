import type { Request } from 'express';
import type { ProfileFacts } from './openid/provider-policy.js';

/**
 * A login the provider has just verified, as the `accounts` hook receives it: who the user is at
 * the provider, and the library's own user for that identity.
 */
export interface VerifiedLogin {
  /** The configured provider's name. */
  provider: string;
  /** The verified claimed identifier, normalised (OpenID 2.0 section 7.2). */
  identifier: string;
  /**
   * The provider's stable key for the account: the SteamID64 for Steam, the claimed identifier
   * for a provider configured by hand.
   */
  accountKey: string;
  /** A name to show, when the provider sent a signed one (sreg `fullname` or `nickname`). */
  displayName?: string;
  /** The signed attribute values the provider sent (sreg), by name. */
  attributes: Readonly<Record<string, string>>;
  /**
   * The teams the provider signed the user a member of, among those its preset asks about
   * (`launchpad({ teams })`); absent when it asks about none.
   */
  teams?: readonly string[];
  /**
   * The account's public profile read at this login (`steam({ webApi })`: persona name, avatar,
   * profile URL); absent when the provider has no profile source, or the profile is private or
   * could not be read.
   */
  profile?: ProfileFacts;
  /**
   * The library's own user id for this identity, created at its first login. Tokens and consents
   * issued before `accounts` was configured carry it: return it as the `accountId` of an account
   * that already existed to keep them (see docs/providers-and-accounts.md).
   */
  userId: string;
}

/** The host's account a login signs in to, or the reason it may not. */
export type AccountDecision =
  | {
      /** The host's account id: tokens, consents, events and `requireBearer` carry it. */
      accountId: string;
      /** Shown on the consent and applications pages. */
      displayName?: string;
    }
  | {
      /** The login is refused with this message, shown to the user (no markup). */
      refuse: string;
    };

/**
 * Maps every verified login to the host's own account: create or find the row in the host's
 * users table, link a second provider to an existing account (return its id), or refuse.
 *
 * @example
 * accounts: async (login) => {
 *   const user = await db.users.findOrCreateBySteamId(login.accountKey);
 *   return user.banned ? { refuse: 'This account is suspended.' } : { accountId: user.id, displayName: user.name };
 * }
 */
export type AccountsHook = (login: VerifiedLogin, req: Request) => AccountDecision | Promise<AccountDecision>;

/** An account the host has already signed in itself, for the authorization endpoint to accept. */
export interface HostAccount {
  accountId: string;
  displayName?: string;
  /**
   * When the user logged in at your app (epoch ms), if you know it: OpenID Connect's `auth_time`,
   * and what `prompt=login` and `max_age` are checked against. Unknown, those requests are
   * refused with `login_required` and ID tokens carry no `auth_time`.
   */
  authTime?: number;
  /** The user's teams, if you know them: what a client's `allowedTeams` is checked against. */
  teams?: string[];
}

/**
 * Reuses the host's own login: resolves the account the host already authenticated on this
 * request (its passport session, say), or `undefined` to let the user log in at a provider.
 *
 * @example
 * authenticatedAccount: (req) => (req.user ? { accountId: req.user.id, displayName: req.user.name } : undefined)
 */
export type AuthenticatedAccountHook = (
  req: Request,
) => HostAccount | undefined | Promise<HostAccount | undefined>;

/**
 * Whether a host's account id can be the subject tokens carry: 1 to 255 characters, and with
 * OpenID Connect on printable ASCII only, as an ID token's `sub` must be (Core 2).
 */
export function isSubject(server: { readonly oidc?: unknown }, id: string): boolean {
  if (id === '' || id.length > 255) return false;
  return server.oidc === undefined || /^[\x21-\x7e]+$/.test(id);
}
