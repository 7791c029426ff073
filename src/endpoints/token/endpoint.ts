import { OAuthError } from '../../errors/oauth-error.js';
import { eventContext } from '../../events/emit.js';
import { json } from '../../http/answer.js';
import { onlyPost, readClientForm } from '../../http/form.js';
import { requiredParam } from '../../http/params.js';
import { endpoint } from '../../http/pipeline.js';
import { authenticateClient, limitFailures, type ClientContext } from '../client-auth/authenticate.js';
import { grants, type GrantHandler } from './grants.js';

interface TokenContext extends ClientContext {
  grant: GrantHandler;
}

/**
 * The token endpoint (RFC 6749 3.2): `POST /oauth/token` with an
 * `application/x-www-form-urlencoded` body, for the `authorization_code` and `refresh_token`
 * grants. The grant asked for is checked before the client is; failed client authentications
 * are rate limited.
 *
 * @see RFC 6749 sections 4.1.3, 5.1, 5.2, 6
 */
export const tokenEndpoint = endpoint<TokenContext>({
  name: 'token',
  method: 'POST',
  path: '/oauth/token',
  kind: 'json',
  steps: [onlyPost, readClientForm('8kb', 20), chooseGrant, authenticateClient, limitFailures, issueTokens],
});

function chooseGrant(ctx: TokenContext): void {
  const grantType = requiredParam(ctx.params, 'grant_type');
  const grant = Object.hasOwn(grants, grantType) ? grants[grantType] : undefined;
  if (!grant) {
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
  }
  ctx.grant = grant;
}

function issueTokens(ctx: TokenContext): Promise<void> {
  return ctx
    .grant(ctx.server, ctx.client, ctx.params, () => eventContext(ctx.req))
    .then((tokens) => {
      ctx.answer = json(tokens);
    });
}
