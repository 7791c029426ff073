import { CONTROL_OR_INVISIBLE } from '../rules/names.js';
import { OAuthError } from '../errors/oauth-error.js';
import { registeredRedirectUriProblem } from '../rules/redirect-uri.js';
import { SCOPE_TOKEN } from '../rules/scopes.js';
import type { ClientRecord, Storage } from '../storage/types.js';
import { registerWith, type RecordExtras } from './register.js';

/**
 * Dynamic client registration (RFC 7591): the client metadata a request sends, checked and turned
 * into a registration through the operator's own path ({@link registerWith}, the checks of
 * `registerClient`), and the registered metadata sent back. What the library's client model holds
 * is what may be registered: one redirect URI, the authorization code grant (with refresh tokens),
 * a public client, or a confidential one when the request carried an initial access token.
 * Metadata it does not use is ignored (RFC 7591 2); what it cannot honour is refused with
 * `invalid_redirect_uri` or `invalid_client_metadata` (RFC 7591 3.2.2).
 *
 * @see RFC 7591 sections 2, 3.1 and 3.2
 */

/** The client authentication methods a self-registered client may choose (RFC 7591 2). */
const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
type AuthMethod = (typeof AUTH_METHODS)[number];

/** The longest `client_name`, as `registerClient` takes it. */
const MAX_NAME_LENGTH = 200;
/** At most this many `contacts`, each at most {@link MAX_CONTACT_LENGTH} characters. */
const MAX_CONTACTS = 10;
const MAX_CONTACT_LENGTH = 320;
/**
 * Control and format characters (bidirectional overrides, zero-width characters): nothing a name
 * needs, and what makes a name on the consent page read otherwise than it is.
 */

/** What the server allows a registration, and when it is made. */
export interface DynamicRegistrationPolicy {
  /** The request carried a good initial access token: a confidential client may register. */
  trusted: boolean;
  /**
   * The scopes a self-registered client may have; empty: any well-formed scope (a server that
   * names none).
   */
  scopes: readonly string[];
  /** Now, epoch milliseconds: the registration's `createdAt` and `client_id_issued_at`. */
  now: number;
  /** What the registration records besides its metadata (its origin, its unused expiry). */
  extras?: RecordExtras;
}

/** The registered metadata (RFC 7591 3.2.1), as the registration endpoint answers it. */
export interface RegisteredClientMetadata {
  client_id: string;
  /** Seconds since the epoch. */
  client_id_issued_at: number;
  /** A confidential client's secret, shown this once. */
  client_secret?: string;
  /** `0`: the secret does not expire. */
  client_secret_expires_at?: 0;
  client_name: string;
  redirect_uris: [string];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: AuthMethod;
  scope?: string;
  application_type?: 'web' | 'native';
  contacts?: string[];
}

/** A registration the endpoint made: the registered metadata, and what the events report. */
export interface DynamicRegistration {
  metadata: RegisteredClientMetadata;
  client: Pick<ClientRecord, 'clientId' | 'applicationName' | 'redirectUri' | 'scopes'> & { public: boolean };
}

/**
 * Registers the client that `body` (the request's JSON) describes, or throws an `OAuthError`
 * (`invalid_redirect_uri`, `invalid_client_metadata`) that says which field and why.
 *
 * @example
 * await registerDynamicClient(storage, { redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'none' }, policy);
 */
export async function registerDynamicClient(
  storage: Storage,
  body: unknown,
  policy: DynamicRegistrationPolicy,
): Promise<DynamicRegistration> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidMetadata('The body must be a JSON object of client metadata (RFC 7591 2).');
  }
  const metadata = body as Record<string, unknown>;
  const authMethod = authMethodOf(metadata.token_endpoint_auth_method, policy.trusted);
  const isPublic = authMethod === 'none';
  const applicationType = applicationTypeOf(metadata.application_type);
  const redirectUri = redirectUriOf(metadata.redirect_uris, isPublic, applicationType);
  checkGrantTypes(metadata.grant_types);
  checkResponseTypes(metadata.response_types);
  const applicationName = nameOf(metadata.client_name, redirectUri);
  const scopes = scopesOf(metadata.scope, policy.scopes);
  const contacts = contactsOf(metadata.contacts);
  let issued;
  try {
    issued = await registerWith(
      storage,
      {
        applicationName,
        redirectUri,
        grantType: 'authorization_code',
        public: isPublic,
        // None: a server that names no scopes, and a client that asked for none.
        ...(scopes.length ? { scopes } : {}),
        ...(contacts.length ? { contacts } : {}),
      },
      { offeredScopes: policy.scopes },
      { createdAt: policy.now, ...policy.extras },
    );
  } catch (err) {
    // The operator's checks are the last word; one that refuses what passed here is still the
    // client's metadata, said as such (their message without the library's prefix).
    if (err instanceof TypeError) {
      throw invalidMetadata(err.message.replace(/^openid-oauth-bridge: /, ''), err);
    }
    throw err;
  }
  const answer: RegisteredClientMetadata = {
    client_id: issued.clientId,
    client_id_issued_at: Math.floor(policy.now / 1000),
    ...(issued.clientSecret === undefined
      ? {}
      : { client_secret: issued.clientSecret, client_secret_expires_at: 0 as const }),
    client_name: applicationName,
    redirect_uris: [redirectUri],
    // Every code exchange also gives a refresh token.
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: authMethod,
    ...(scopes.length ? { scope: scopes.join(' ') } : {}),
    ...(applicationType === undefined ? {} : { application_type: applicationType }),
    ...(contacts.length ? { contacts } : {}),
  };
  return {
    metadata: answer,
    client: { clientId: issued.clientId, applicationName, redirectUri, scopes, public: isPublic },
  };
}

function invalidMetadata(description: string, cause?: unknown): OAuthError {
  return new OAuthError('invalid_client_metadata', description, cause === undefined ? {} : { cause });
}

function invalidRedirectUri(description: string): OAuthError {
  return new OAuthError('invalid_redirect_uri', description);
}

/**
 * `token_endpoint_auth_method`: `none` for a public client, a client secret (`client_secret_basic`,
 * `client_secret_post`) with an initial access token only. Absent, RFC 7591 2 reads
 * `client_secret_basic`; without a token the server registers a public client instead (RFC 7591
 * 3.2.1 lets it replace a value) and says so in its answer.
 */
function authMethodOf(value: unknown, trusted: boolean): AuthMethod {
  if (value === undefined) return trusted ? 'client_secret_basic' : 'none';
  if (typeof value !== 'string' || !(AUTH_METHODS as readonly string[]).includes(value)) {
    throw invalidMetadata(
      `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')} (a client secret; other methods are not supported).`,
    );
  }
  if (value !== 'none' && !trusted) {
    throw invalidMetadata(
      `A confidential client (token_endpoint_auth_method ${value}) registers only with an initial access token (Authorization: Bearer); without one, register a public client: token_endpoint_auth_method none, with PKCE.`,
    );
  }
  return value as AuthMethod;
}

/** `application_type` (OpenID Connect Dynamic Client Registration 1.0 2): `web` or `native`, or absent. */
function applicationTypeOf(value: unknown): 'web' | 'native' | undefined {
  if (value === undefined) return undefined;
  if (value !== 'web' && value !== 'native') {
    throw invalidMetadata('application_type must be web or native.');
  }
  return value;
}

/**
 * The one redirect URI of `redirect_uris`, checked by the rule every registration follows
 * ({@link registeredRedirectUriProblem}): a native app (a public client) may use a loopback
 * address or a private-use scheme (RFC 8252 7.1, 7.3); a client that says it is a web app
 * (`application_type: web`) only https. The client model holds one redirect URI: more are refused
 * rather than some silently dropped, which the client would learn only at its first authorization.
 */
function redirectUriOf(
  value: unknown,
  isPublic: boolean,
  applicationType: 'web' | 'native' | undefined,
): string {
  if (!Array.isArray(value) || value.length === 0 || value.some((uri) => typeof uri !== 'string')) {
    throw invalidRedirectUri('redirect_uris must be a list of one redirect URI (a string).');
  }
  const uris = [...new Set(value as string[])];
  if (uris.length > 1) {
    throw invalidRedirectUri(
      `This server registers one redirect URI per client, and redirect_uris has ${uris.length}: register each separately, or send the one this client uses.`,
    );
  }
  const uri = uris[0]!;
  const problem = registeredRedirectUriProblem(uri, { privateUseScheme: isPublic });
  if (problem !== null) throw invalidRedirectUri(`redirect_uris[0] ${problem}.`);
  if (applicationType === 'web' && !uri.startsWith('https://')) {
    throw invalidRedirectUri(
      'redirect_uris[0]: a web application (application_type web) must use https; an app on the device (a loopback address or a private-use scheme) registers with application_type native.',
    );
  }
  return uri;
}

/**
 * `grant_types`: the authorization code grant must be among them. Refresh tokens come with it;
 * the others this server does not register a client for (`implicit`, `client_credentials`,
 * `password`, ...) are ignored, and the answer lists what was registered (RFC 7591 2, 3.2.1).
 */
function checkGrantTypes(value: unknown): void {
  if (value === undefined) return;
  if (!Array.isArray(value) || value.some((grant) => typeof grant !== 'string')) {
    throw invalidMetadata('grant_types must be a list of grant types (strings).');
  }
  if (!value.includes('authorization_code')) {
    throw invalidMetadata(
      'This server registers clients of the authorization code grant: grant_types must include authorization_code (refresh_token comes with it).',
    );
  }
}

/** `response_types`: `code` must be among them; others are ignored, as for the grant types. */
function checkResponseTypes(value: unknown): void {
  if (value === undefined) return;
  if (!Array.isArray(value) || value.some((type) => typeof type !== 'string')) {
    throw invalidMetadata('response_types must be a list of response types (strings).');
  }
  if (!value.includes('code')) {
    throw invalidMetadata(
      'This server registers clients of the authorization code grant: response_types must include code.',
    );
  }
}

/**
 * `client_name`, trimmed: 1 to 200 visible characters. Without one, where the client sends the
 * person back (the redirect URI's host, or its scheme) names it: the consent page must name
 * something, and that much is true.
 */
function nameOf(value: unknown, redirectUri: string): string {
  if (value === undefined) {
    const url = new URL(redirectUri);
    return url.host || url.protocol.slice(0, -1);
  }
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '' || name.length > MAX_NAME_LENGTH || CONTROL_OR_INVISIBLE.test(name)) {
    throw invalidMetadata(
      `client_name must be a string of 1 to ${MAX_NAME_LENGTH} characters, without control or invisible formatting characters.`,
    );
  }
  return name;
}

/**
 * `scope`: space-separated scope-tokens. Those the server allows self-registered clients are
 * kept, the others dropped; none of them is `invalid_client_metadata`; without `scope`, every allowed scope. The answer
 * says which (RFC 7591 3.2.1). A server that names no scopes keeps what was asked.
 */
function scopesOf(value: unknown, allowed: readonly string[]): string[] {
  if (value === undefined) return [...allowed];
  if (typeof value !== 'string') throw invalidMetadata('scope must be a string of space-separated scopes.');
  const asked = value.split(' ').filter((scope) => scope !== '');
  if (asked.some((scope) => !SCOPE_TOKEN.test(scope))) {
    throw invalidMetadata('scope must be space-separated scope-tokens (RFC 6749 3.3).');
  }
  if (allowed.length === 0) return [...new Set(asked)];
  if (asked.length === 0) return [...allowed];
  const kept = allowed.filter((scope) => asked.includes(scope));
  // Not every allowed scope for a client that asked for none of them: wider than it asked.
  if (kept.length === 0) {
    throw invalidMetadata(
      'None of the scopes asked for is offered to applications that register themselves.',
    );
  }
  return kept;
}

/** `contacts`: at most 10 strings (e-mail addresses), kept for the operator. */
function contactsOf(value: unknown): string[] {
  if (value === undefined) return [];
  if (
    !Array.isArray(value) ||
    value.length > MAX_CONTACTS ||
    value.some(
      (contact) =>
        typeof contact !== 'string' ||
        contact.trim() === '' ||
        contact.length > MAX_CONTACT_LENGTH ||
        // Stored space-delimited (an e-mail address has no space).
        /\s/.test(contact) ||
        CONTROL_OR_INVISIBLE.test(contact),
    )
  ) {
    throw invalidMetadata(
      `contacts must be a list of at most ${MAX_CONTACTS} e-mail addresses (strings of 1 to ${MAX_CONTACT_LENGTH} characters, without spaces).`,
    );
  }
  return [...new Set(value as string[])];
}
