import type { Router } from 'express';
import { emit, eventContext } from '../events/emit.js';
import { optionalParam, requiredParam } from '../http/params.js';
import type { AuthorizationServer } from '../server.js';
import { findToken } from '../tokens/lookup.js';
import { clientAuthenticatedEndpoint } from './client-endpoint.js';

/**
 * The token revocation endpoint (RFC 7009): `POST /oauth/revoke` with `token` and an optional
 * `token_type_hint` (`access_token` or `refresh_token`) in an `application/x-www-form-urlencoded`
 * body. The client authenticates as at the token endpoint. Mount it at the path of `baseUrl`.
 *
 * Revoking either kind of token revokes its whole grant: the refresh token and every access
 * token issued with or from it (RFC 7009 2.1 requires this for a refresh token and allows it for
 * an access token). The answer is `200` with an empty body whether or not anything was revoked:
 * an unknown, expired or already revoked token, and a token issued to another client (which is
 * left alone), all give `200` (RFC 7009 2.2), so the endpoint tells a client nothing about tokens
 * that are not its own.
 *
 * @example
 * app.use(revocationRouter(server));
 *
 * @see RFC 7009 sections 2.1, 2.2, 2.2.1
 */
export function revocationRouter(server: AuthorizationServer): Router {
  return clientAuthenticatedEndpoint(
    server,
    '/oauth/revoke',
    'revocation',
    async (server, locals, req, res) => {
      const token = requiredParam(locals.params, 'token');
      // Advisory only: an unknown hint is not `unsupported_token_type`, the search just covers both kinds.
      const hint = optionalParam(locals.params, 'token_type_hint');
      const found = await findToken(server, token, hint);
      if (found && found.record.clientId === locals.client.clientId) {
        const { clientId, userId, grantId } = found.record;
        const tokensRevoked = await server.storage.tokens.revokeGrant(grantId, server.clock());
        emit(server, {
          type: 'token.revoked',
          clientId,
          userId,
          grantId,
          tokenType: found.type,
          tokensRevoked,
          ...eventContext(req),
        });
      }
      res.status(200).end();
    },
  );
}
