import { StorageUnavailableError } from './storage-unavailable.js';

/**
 * Error codes of RFC 6749 (sections 4.1.2.1, 4.2.2.1 and 5.2), RFC 6750 (section 3.1) and RFC 8707, plus
 * `temporarily_unavailable` used for storage outages.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_token'
  | 'insufficient_scope'
  // OpenID Connect Core 3.1.2.6, for `prompt=none`.
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  // RFC 8628 3.5, the device access token response.
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  // RFC 8707 2, a resource the server does not issue tokens for.
  | 'invalid_target';

/**
 * The single status table: RFC 6749 section 5.2 (every token endpoint error is 400 except
 * `invalid_client`, 401) and RFC 6750 section 3.1 (`invalid_token` 401, `insufficient_scope` 403).
 * Codes that only ever travel in a redirect get the status of the page shown when they cannot be
 * redirected.
 */
export const STATUS_BY_CODE: Readonly<Record<OAuthErrorCode, number>> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  server_error: 500,
  temporarily_unavailable: 503,
  invalid_token: 401,
  insufficient_scope: 403,
  login_required: 403,
  consent_required: 403,
  interaction_required: 403,
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
  invalid_target: 400,
};

/** Options of {@link OAuthError}: what is logged, where the error may go, how it is sent. */
export interface OAuthErrorOptions {
  /** Logged, never sent to the client. */
  cause?: unknown;
  /**
   * Whether the authorization endpoint may deliver this error to the client's redirect URI.
   * False for errors found before the client and its redirect URI are verified (RFC 6749 4.1.2.1).
   */
  redirectable?: boolean;
  /** Extra response headers, e.g. `Retry-After`. */
  headers?: Record<string, string>;
  /**
   * Transport-level status that overrides the table (413 for an oversized body, 429 when rate
   * limited); OAuth-level outcomes always take the table's status.
   */
  httpStatus?: 400 | 413 | 429;
}

/**
 * The one error type of the library. It carries an RFC error code, a public description and a
 * private cause.
 *
 * @example
 * throw new OAuthError('invalid_grant', 'The authorization code has expired.');
 *
 * @see RFC 6749 section 5.2, RFC 6750 section 3.1
 */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  readonly code: OAuthErrorCode;
  /** Safe to show: never contains a token, code or secret. */
  readonly description: string;
  readonly redirectable: boolean;
  readonly headers: Readonly<Record<string, string>>;
  readonly #httpStatus: number | undefined;

  constructor(code: OAuthErrorCode, description: string, options: OAuthErrorOptions = {}) {
    super(`${code}: ${description}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.description = description;
    this.redirectable = options.redirectable ?? true;
    this.headers = options.headers ?? {};
    this.#httpStatus = options.httpStatus;
  }

  get status(): number {
    return this.#httpStatus ?? STATUS_BY_CODE[this.code];
  }

  /** The RFC 6749 5.2 JSON body. */
  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}

/**
 * Wraps anything thrown that is not an `OAuthError`: a {@link StorageUnavailableError} becomes
 * `temporarily_unavailable` (503, `Retry-After`, never redirected: the error page says to try
 * again), anything unknown a `server_error` that hides its internals.
 */
export function toOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err;
  if (StorageUnavailableError.is(err)) {
    return new OAuthError(
      'temporarily_unavailable',
      'The service is temporarily unavailable. Please try again in a few moments.',
      { cause: err, redirectable: false, headers: { 'Retry-After': String(err.retryAfterSeconds) } },
    );
  }
  if (isBodyParserError(err)) {
    if (err.status === 413) {
      return new OAuthError('invalid_request', 'The request body is too large.', {
        cause: err,
        httpStatus: 413,
      });
    }
    return new OAuthError('invalid_request', 'The request body could not be parsed.', { cause: err });
  }
  return new OAuthError('server_error', 'The server met an unexpected condition.', { cause: err });
}

function isBodyParserError(err: unknown): err is { status: number; type: string } {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { status?: unknown }).status === 'number' &&
    typeof (err as { type?: unknown }).type === 'string'
  );
}
