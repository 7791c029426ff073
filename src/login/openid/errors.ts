/** What went wrong in an OpenID login, coarse enough to pick a page or a status from. */
export type OpenIdLoginErrorKind =
  'cancelled' | 'unknown_provider' | 'provider_unreachable' | 'invalid_response' | 'replayed' | 'expired';

/**
 * The only error {@link RelyingParty} throws. Its `message` is safe to show to the user: it never
 * contains a field value, a URL path, a nonce or a stack. The `cause`, when set, is for logs.
 *
 * @example
 * try { await rp.verify(url, state); }
 * catch (err) { if (err instanceof OpenIdLoginError && err.kind === 'cancelled') showRetry(); }
 */
export class OpenIdLoginError extends Error {
  override readonly name = 'OpenIdLoginError';
  readonly kind: OpenIdLoginErrorKind;

  constructor(kind: OpenIdLoginErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

/** Shorthand for the most common failure: a response that does not verify. */
export function invalidResponse(message: string, cause?: unknown): OpenIdLoginError {
  return new OpenIdLoginError('invalid_response', message, cause === undefined ? undefined : { cause });
}
