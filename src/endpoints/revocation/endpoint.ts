import { emit, eventContext } from '../../events/emit.js';
import { revokeGrant } from '../../grants/grant.js';
import { json } from '../../http/answer.js';
import { readClientForm } from '../shared/form.js';
import { optionalParam, requiredParam } from '../../http/params.js';
import { endpoint } from '../shared/pipeline.js';
import {
  authenticateOrNamePublicClient,
  limitFailures,
  loadClientRows,
  paramHash,
  type ClientContext,
} from '../shared/client-auth.js';

/**
 * The token revocation endpoint (RFC 7009): `POST /oauth/revoke` with `token` and an optional
 * `token_type_hint` (`access_token` or `refresh_token`) in an `application/x-www-form-urlencoded`
 * body. A confidential client authenticates as at the token endpoint; a public (implicit) client
 * names itself with `client_id`, and may revoke only its own tokens (RFC 7009 section 5).
 *
 * Revoking either kind of token revokes its whole grant: the user's authorization of the client,
 * with every access and refresh token and code issued under it (RFC 7009 2.1 requires this for a
 * refresh token and allows it for an access token); the next authorization asks for consent
 * again. The answer is `200` with `{}` whether or not anything was revoked: an unknown,
 * expired or already revoked token, and a token issued to another client (which is left alone),
 * all give `200` (RFC 7009 2.2), so the endpoint tells a client nothing about tokens that are
 * not its own.
 *
 * @see RFC 7009 sections 2.1, 2.2, 2.2.1
 */
export const revocationEndpoint = endpoint<ClientContext>({
  name: 'revocation',
  method: 'POST',
  path: '/oauth/revoke',
  kind: 'json',
  steps: [
    readClientForm('8kb', 10),
    loadClientRows(({ params }) => ({ token: paramHash(params, 'token') })),
    authenticateOrNamePublicClient,
    limitFailures,
    revoke,
  ],
});

async function revoke(ctx: ClientContext): Promise<void> {
  const { server, params, client } = ctx;
  requiredParam(params, 'token');
  // Advisory only: an unknown hint is not `unsupported_token_type`, the search covers both kinds.
  optionalParam(params, 'token_type_hint');
  const found = ctx.token!;
  if (found && found.token.clientId === client.clientId && (await revokeGrant(server, found.token))) {
    const { clientId, userId, grantId, type } = found.token;
    emit(server, {
      type: 'token.revoked',
      clientId,
      userId,
      grantId,
      tokenType: type,
      ...eventContext(ctx.req),
    });
  }
  // RFC 7009 2.2: the body is ignored; `{}` spares clients that parse every answer as JSON.
  ctx.answer = json({});
}
