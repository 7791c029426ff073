import { OAuthError } from './oauth-error.js';

/**
 * A login that did not complete for a reason the user can act on: a 400 page (the user's request
 * could not be completed; nothing was refused) with a way to try again.
 */
export class LoginFailed extends OAuthError {
  constructor(
    message: string,
    /** Where "Try again" leads. */
    readonly retryUrl: string,
  ) {
    super('access_denied', message, { redirectable: false });
  }
}

/**
 * The provider did not answer in time, or not at all: a 502 page that offers to try again or,
 * when others are configured, to choose another provider.
 */
export class ProviderUnreachable extends LoginFailed {
  constructor(
    message: string,
    retryUrl: string,
    /** The provider selection, when there is more than one provider. */
    readonly otherProviderUrl: string | undefined,
    /** What failed (the provider refused, could not be reached, timed out): logged, never shown. */
    cause?: unknown,
  ) {
    super(message, retryUrl);
    if (cause !== undefined) this.cause = cause;
  }
}
