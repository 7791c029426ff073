import type {
  DeveloperAppFormPageData,
  DeveloperAppPageData,
  DevelopersPageData,
} from './developer-types.js';
import type { ScopeDescription, SignOutForm } from './form-types.js';

export type { ScopeDescription, SignOutForm } from './form-types.js';

/** A provider button on the selection page. */
export interface ProviderChoice {
  name: string;
  /** Where the button leads (the library's login route for that provider). */
  loginUrl: string;
  /** The provider's icon (a preset's), an https or `data:image/…` URL. */
  icon?: string;
}

/** What the provider selection page shows: the application asking, and a button per provider. */
export interface SelectionPageData {
  applicationName: string;
  providers: ProviderChoice[];
}

/** What the consent page shows and posts: the application, the scopes, the signed-in account. */
export interface ConsentPageData {
  applicationName: string;
  clientId: string;
  /** Scopes the application asks for, with the operator's descriptions. */
  scopes: ScopeDescription[];
  /**
   * The resource (RFC 8707) the access is for, when the server declares resources: its URL and the
   * name the host gave it.
   */
  resource?: { uri: string; name?: string };
  /** The form's target (POST). */
  action: string;
  /** Hidden fields the form must send back unchanged. */
  fields: { transaction: string; csrf: string };
  /** The signed-in account: its display name, else its identifier (the OpenID claimed identifier). */
  signedInAs?: string;
  /** The signed-in account's avatar (Steam's, with `steam({ webApi })`): an https URL. */
  picture?: string;
  /** The provider the user signed in at; absent for an account the host signed in itself. */
  provider?: string;
  /**
   * A device's request (RFC 8628): the user code it shows, for the person to compare with the one
   * on their device before approving. Absent for a browser's request.
   */
  userCode?: string;
  /**
   * The person is asked at every sign-in of this application, not once (a device; a native app
   * that anyone on the machine could impersonate): the page must not say it will not ask again.
   */
  asksEachTime?: boolean;
  /**
   * The application was not registered by this site's operator: it described itself in a client
   * metadata document (`clientMetadataDocuments`), so its name is its own claim. The page must
   * say so, with the host that serves the document (where the name comes from) and the host the
   * browser goes back to after the decision.
   */
  clientDocument?: ClientDocumentNotice;
  /**
   * The application registered itself (dynamic client registration, RFC 7591): its name is its
   * own claim, checked by no one. The page must say so, with the host the browser goes back to
   * after the decision (the one thing about it that is checked).
   */
  selfRegistered?: { redirectHost: string };
  /**
   * A member made the application on the developer page: their name (as their latest sign-in gave
   * it), and whether the operator verified it. Absent for the operator's own applications.
   */
  maker?: {
    name: string;
    verified: boolean;
    /** Where the browser goes back to after the decision (a browser's request): the redirect URI's host, or its scheme. */
    redirectHost?: string;
  };
  /** What the application says it does, in its maker's words (a member's application). */
  description?: string;
  /** The application's home page, an https URL, in its maker's words. */
  homepageUri?: string;
  /**
   * A second form, to sign out and sign in with another account: POST to `action` with these
   * hidden fields. The authorization request is kept and resumes at the provider selection.
   */
  switchAccount?: SignOutForm;
}

/** {@link ConsentPageData.clientDocument}. */
export interface ClientDocumentNotice {
  /** The host serving the application's metadata document (its `client_id` is the document's URL). */
  documentHost: string;
  /** Where the browser goes back to: the redirect URI's host, or its scheme for an app's own scheme. */
  redirectHost: string;
}

/** What an error page shows: the error, never a stack trace, and the ways back. */
export interface ErrorPageData {
  status: number;
  title: string;
  /** Safe to show: never contains a token, code or secret. */
  message: string;
  /** Offered as "try again", e.g. back to the provider selection. */
  retryUrl?: string;
  /** Offered as "choose another provider" when a provider does not answer and others are configured. */
  otherProviderUrl?: string;
  /**
   * The way back: to the client application with the error when its redirect URI is verified,
   * otherwise to the sign-in in progress or to the site. Every error page has one.
   */
  backUrl?: string;
  /** The link's text, e.g. "Return to the application". */
  backLabel?: string;
}

/** What the authorized-applications page shows: the applications the user trusts, to revoke. */
export interface ApplicationsPageData {
  /** The signed-in account: its display name, else its identifier (the OpenID claimed identifier). */
  signedInAs: string;
  /** The signed-in account's avatar: an https URL. */
  picture?: string;
  applications: {
    clientId: string;
    applicationName: string;
    scopes: ScopeDescription[];
    /** When the user first trusted it (epoch ms). */
    authorizedAt: number;
    /** When the user last gave consent to it (epoch ms). */
    updatedAt: number;
    /**
     * When it last used the user's account: a token issued, refreshed or accepted (epoch ms, up
     * to `usage.flushSeconds` behind); absent: not since the server keeps usage.
     */
    lastUsedAt?: number;
  }[];
  /** The revoke form's target (POST), with fields `client_id` and `csrf`. */
  revokeAction: string;
  csrf: string;
  /** Set right after a revocation: the application's name, for a confirmation. */
  revoked?: string;
  /** A form that signs the user out. */
  signOut?: SignOutForm;
}

/**
 * What the OpenID Connect sign-out page shows (RP-initiated logout): a question with a sign-out
 * form while someone is signed in, or that nobody is any more.
 */
export interface SignOutPageData {
  /** The application that asked for the sign-out, when it is known (from `id_token_hint` or `client_id`). */
  applicationName?: string;
  /** Who is signed in, as the consent page names them. */
  signedInAs?: string;
  /** The sign-out form; absent once signed out. */
  form?: SignOutForm;
}

/**
 * The device verification page (RFC 8628 3.3): where a person types the user code their device
 * shows. The form posts `user_code` to `action`.
 */
export interface DeviceCodePageData {
  /** The form's target (POST). */
  action: string;
  /** The code to prefill (from `verification_uri_complete`); the person still confirms it. */
  userCode?: string;
  /** Why the last code was refused, for the person to try again. */
  error?: string;
  /** Who is signed in already, if anyone. */
  signedInAs?: string;
}

/** The page after the person answered a device's request on the consent page. */
export interface DeviceDonePageData {
  applicationName: string;
  /** Approved: the device signs in now. Denied: it learns so. */
  approved: boolean;
}

/**
 * Renders the library's HTML pages. Each receives typed data and returns a complete HTML document;
 * a host replaces any of them with `pages: { consent: (data) => ... }`. A replacement must escape
 * every value it shows.
 */
export interface PageRenderers {
  selection(data: SelectionPageData): string;
  consent(data: ConsentPageData): string;
  error(data: ErrorPageData): string;
  /** The authorized-applications page (`GET /oauth/applications`, served by `oauthRouter`). */
  applications(data: ApplicationsPageData): string;
  /** The OpenID Connect sign-out page (RP-initiated logout). */
  signOut(data: SignOutPageData): string;
  /** The device verification page (RFC 8628): type the code shown on the device. */
  deviceCode(data: DeviceCodePageData): string;
  /** The device flow's last page: approved or denied, go back to the device. */
  deviceDone(data: DeviceDonePageData): string;
  /** The developer page (`developerRouter`): the member's applications. */
  developers(data: DevelopersPageData): string;
  /** The developer page's form that creates an application. */
  developerAppForm(data: DeveloperAppFormPageData): string;
  /** One of the member's applications: its credentials (the secret once), reach and forms. */
  developerApp(data: DeveloperAppPageData): string;
}
