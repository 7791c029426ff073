import type { ScopeDescription, SignOutForm } from './form-types.js';

/*
 * What the developer page's three pages show (`developerRouter`): a member's applications, the
 * form that creates one, and one application with its credentials. Plain data: a replacement page
 * escapes every value it shows.
 */

/** A member's application, as the list and its own page show it. */
export interface DeveloperAppSummary {
  clientId: string;
  applicationName: string;
  /** `web` (a server, or a browser app with https redirects), `native` (a desktop or mobile app, a CLI with a browser) or `device`. */
  kind: 'web' | 'native' | 'device';
  /** It has a secret (a server); otherwise it is public and uses PKCE or the device flow. */
  confidential: boolean;
  /** `suspended`: the operator disabled it; `awaiting_approval`: the operator has not approved it yet. */
  status: 'active' | 'awaiting_approval' | 'suspended';
  /** The operator vouches for it; the consent page says so, and no reach cap applies. */
  verified: boolean;
  /** How many members trust it now. */
  members: number;
  /** The reach cap it is under (unverified), if any. */
  reachCap?: number;
  /** When a member last gave it consent (epoch ms). */
  lastAuthorizedAt?: number;
  createdAt: number;
  /** Its own page. */
  url: string;
  /**
   * Its usage, when the server keeps it: its last use (absent: none yet) and its counts over the
   * last 30 days (tokens issued, refreshes, bearer uses).
   */
  usage?: { lastUsedAt?: number; last30Days: { token: number; refresh: number; bearer: number } };
}

/** The developer page: the member's applications, and the way to create one. */
export interface DevelopersPageData {
  signedInAs: string;
  picture?: string;
  apps: DeveloperAppSummary[];
  /** How many applications a member may have. */
  maxApps: number;
  /** The create form's page; absent when the member may not create one now. */
  createUrl?: string;
  /** Why the member may not create one now (the limit, a suspension). */
  createRefusal?: string;
  /** Set right after a deletion: the application's name, for a confirmation. */
  deleted?: string;
  signOut?: SignOutForm;
}

/** The values of an application's form, as filled in (or as stored, to change them). */
export interface DeveloperAppValues {
  applicationName: string;
  kind: 'web' | 'native' | 'device';
  confidential: boolean;
  redirectUri: string;
  scopes: string[];
  /** Space- or line-separated. */
  postLogoutRedirectUris: string;
  description: string;
  homepageUri: string;
  teams: string[];
}

/** A form of the developer page: where it posts, and the hidden fields it must send back. */
export interface DeveloperForm {
  action: string;
  fields: Record<string, string>;
}

/** The create form's page (`GET /developers/new`), and the form again after a refusal. */
export interface DeveloperAppFormPageData {
  signedInAs: string;
  form: DeveloperForm;
  values: DeveloperAppValues;
  /** The scopes a member's application may have, with the operator's descriptions. */
  scopes: ScopeDescription[];
  /** The member's teams, which an application may be limited to. */
  teams: string[];
  /** Why the last submission was refused. */
  error?: string;
  /** Said above the form (e.g. "You signed in again: create the application now"). */
  notice?: string;
  /** The member's application list. */
  backUrl: string;
  /** Minutes a sign-in stays recent enough to make a secret. */
  recentLoginMinutes: number;
}

/** One application's page (`GET /developers/app`): its credentials, reach, and forms. */
export interface DeveloperAppPageData {
  signedInAs: string;
  app: DeveloperAppSummary & {
    redirectUri: string;
    scopes: ScopeDescription[];
    description?: string;
    homepageUri?: string;
    postLogoutRedirectUris: string[];
    allowedTeams: string[];
    /** Until when the previous secret still works, after a rotation with an overlap (epoch ms). */
    previousSecretUntil?: number;
  };
  /**
   * The application's secret, on the one page that shows it: right after it was created or
   * rotated. Never shown again: only a hash is kept.
   */
  secret?: string;
  /** What was just done, for a confirmation. */
  notice?: string;
  error?: string;
  /** What a client needs besides its id and secret: the server's endpoints. */
  endpoints: { issuer: string; authorization: string; token: string; deviceAuthorization: string };
  /** The change form, filled in with the stored values; absent for a suspended application. */
  edit?: DeveloperForm & { values: DeveloperAppValues; scopes: ScopeDescription[]; teams: string[] };
  /**
   * The rotation form, for a confidential application (not suspended): how long the old secret
   * may keep working.
   */
  rotate?: DeveloperForm & { overlapChoices: { minutes: number; label: string }[] };
  /** The deletion form; absent for a suspended application. */
  delete?: DeveloperForm;
  backUrl: string;
}
