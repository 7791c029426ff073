import { OAuthError } from '../../errors/oauth-error.js';
import { readClientForm } from '../shared/form.js';
import { requiredParam } from '../../http/params.js';
import { endpoint } from '../shared/pipeline.js';
import { authenticateOrNamePublicClient, limitFailures, loadClientRows } from '../shared/client-auth.js';
import { grantTypes, type TokenContext } from './grants.js';

/**
 * The token endpoint (RFC 6749 3.2): `POST /oauth/token` with an
 * `application/x-www-form-urlencoded` body, for the `authorization_code`, `refresh_token`,
 * device code and `client_credentials` grants. The grant asked for is checked before the client is; then the client, its rate-limit
 * counters and the code or refresh token are read at once; failed client authentications are
 * rate limited.
 *
 * @see RFC 6749 sections 4.1.3, 4.4, 5.1, 5.2, 6
 */
export const tokenEndpoint = endpoint<TokenContext>({
  name: 'token',
  method: 'POST',
  path: '/oauth/token',
  kind: 'json',
  steps: [
    readClientForm('8kb', 20),
    chooseGrant,
    loadClientRows<TokenContext>((ctx) => ctx.grantType.names(ctx)),
    authenticateOrNamePublicClient,
    limitFailures,
    issueTokens,
  ],
});

function chooseGrant(ctx: TokenContext): void {
  const grantType = requiredParam(ctx.params, 'grant_type');
  const chosen = Object.hasOwn(grantTypes, grantType) ? grantTypes[grantType] : undefined;
  if (!chosen) {
    throw new OAuthError(
      'unsupported_grant_type',
      'grant_type must be authorization_code, refresh_token, client_credentials or urn:ietf:params:oauth:grant-type:device_code.',
    );
  }
  ctx.grantType = chosen;
}

/** Step: the chosen grant type's handler, which answers with the token response. */
function issueTokens(ctx: TokenContext): Promise<void> {
  return ctx.grantType.handler(ctx);
}
