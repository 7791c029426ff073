import type { ServerEvents } from '../events/emitter.js';
import type { Storage } from '../storage/types.js';
import type { ResourceSet } from '../rules/resources.js';
import type { AccessTokenKeys } from '../oidc/access-token.js';

/**
 * What the grant rules need of the server: its storage, clock, token options and events. The
 * authorization server has all of it; the CLI builds one of its own.
 */
export interface GrantDeps {
  readonly storage: Storage;
  readonly clock: () => number;
  readonly options: {
    readonly tokens: {
      /** Access token lifetime in seconds. */
      readonly accessTokenTtl: number;
      /** Authorization code lifetime in seconds. */
      readonly codeTtl: number;
      /**
       * Replace the refresh token at each refresh (`true`, or `'public-clients'`: only those of
       * public clients); reuse of a replaced one revokes the grant.
       */
      readonly rotateRefreshTokens: boolean | 'public-clients';
    };
    /** The server's `profile`; absent (the CLI's): the default, `'oauth2'`. */
    readonly profile?: 'oauth2' | 'oauth2.1';
  };
  readonly events: ServerEvents;
  /** The resources tokens are issued for (RFC 8707); absent: none (the CLI's). */
  readonly resources?: ResourceSet;
  /** The issuer and the signing keys of JWT access tokens (RFC 9068); absent: none (the CLI's). */
  readonly urls?: AccessTokenKeys['urls'];
  readonly oidc?: AccessTokenKeys['oidc'];
}
