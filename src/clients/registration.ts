import type { ClientGrantType } from '../storage/types.js';

/*
 * What a registration is made of: the fields the operator gives ({@link ClientRegistration}) and
 * the server's offer they are checked against. Read by the field checks and by the registration.
 */

/** Where a registration's scopes must come from: the scopes the server offers, when it names any. */
export interface RegistrationContext {
  /**
   * The scopes the server offers (the keys of its `scopes` option): every scope of a client must
   * be one of them. Empty or absent: any well-formed scope.
   */
  offeredScopes?: readonly string[];
  /**
   * The server's `profile`: with `'oauth2.1'` an implicit client is refused. Absent: the default
   * profile, under which every grant type registers.
   */
  profile?: 'oauth2' | 'oauth2.1';
}

/**
 * A client application to register out of band ({@link registerClient}): what the operator
 * knows of it. The library chooses the id (unless given) and the secret, shown once.
 *
 * @see RFC 6749 section 2
 */
export interface ClientRegistration {
  /** User-friendly name presented to the user (the spec's `application_name`). */
  applicationName: string;
  /**
   * Base redirect URI (the spec's `redirect_URI`), in canonical form: absolute https, or http on a
   * loopback address (`http://127.0.0.1:8080/cb`, RFC 8252 7.3); for a public code client also a
   * reverse-domain private-use scheme (`com.example.app:/cb`, RFC 8252 7.1). No query, fragment or
   * wildcard. Required, except for a `device_code` or `client_credentials` client, which has none.
   */
  redirectUri?: string;
  /**
   * The grant the client uses: `authorization_code` (the default: web apps, and native apps that
   * open a browser), `device_code` (RFC 8628: command-line tools, bots, consoles, which cannot
   * receive a redirect), `client_credentials` (RFC 6749 4.4: a bot, a job or a service acting as
   * itself, for no member; confidential, no redirect URI, no refresh token) or `implicit`. See
   * docs/native-apps.md and docs/client-credentials.md.
   */
  grantType?: ClientGrantType;
  /**
   * A public client (RFC 6749 2.1): no secret, it names itself with `client_id` alone. For apps
   * that cannot keep a secret: a desktop or mobile app, a command-line tool. A public code client
   * must use PKCE (S256), may name any port of a loopback IP redirect URI, and has its refresh
   * tokens rotated (RFC 9700 4.14). Code and device clients only; an implicit client is always
   * public, a `client_credentials` client never. Default `false`.
   */
  public?: boolean;
  /**
   * Scopes the client may request: at least one, each an RFC 6749 scope-token, and each offered by
   * the server when the server names its scopes (see {@link RegistrationContext}). Left out: all of
   * the offered scopes, or none when the server names none.
   */
  scopes?: string[];
  /** Scopes granted when a request names none; default all of `scopes`. */
  defaultScopes?: string[];
  /** Ways to reach the client's developers, for the operator. */
  contacts?: string[];
  /**
   * Where OpenID Connect RP-initiated logout may send the browser after signing out, each checked
   * as `redirectUri` is. Default none.
   */
  postLogoutRedirectUris?: string[];
  /** Choose the id yourself (e.g. for a fixed demo client); default a random UUID. */
  clientId?: string;
  /**
   * Require PKCE (`code_challenge`, S256) on every request; code clients only. Default `false`
   * (`true`, and not changeable, for a public code client).
   */
  requirePkce?: boolean;
  /**
   * Only members of at least one of these Launchpad teams (names without `~`) may use the client:
   * anyone else gets `access_denied` after signing in. The provider must be asked about them
   * (`launchpad({ teams })`). Default: anyone.
   */
  allowedTeams?: string[];
  /**
   * The resources (RFC 8707) of the server's `resources` option this client may ask tokens for,
   * as declared there. Default: every declared resource.
   */
  resources?: string[];
}
