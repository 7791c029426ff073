import type { RequestHandler } from 'express';
import type { AuthorizationServer } from '../../config/server.js';
import { json } from '../../http/answer.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { endpoint, handle } from '../shared/pipeline.js';
import { hostClaims, releasedClaims } from '../../oidc/id-token.js';
import { bearerSteps, type BearerStepContext } from '../shared/bearer.js';

/** Step: the claims of the token's subject that its scopes release, `sub` always. */
async function answerClaims(ctx: BearerStepContext): Promise<void> {
  const { userId, scopes } = ctx.bearer;
  // A client's own token is never granted `openid` (no person signs in): this does not happen.
  if (userId === null) throw new OAuthError('insufficient_scope', 'A client acting as itself has no claims.');
  const saved = (await ctx.server.storage.users.findClaims?.(userId)) ?? undefined;
  const own = await hostClaims(ctx.server, userId, scopes);
  ctx.answer = json({ ...releasedClaims(saved, scopes), ...own, sub: userId });
}

/**
 * The UserInfo endpoint (OpenID Connect Core 5.3), `GET` and `POST /oauth/userinfo`: the access
 * token in `Authorization: Bearer`, checked as `requireBearer` checks it ({@link bearerSteps}), and
 * it must have been granted `openid` (else 403 `insufficient_scope`) and, with resources declared,
 * be for the default resource or none (a token for another is `invalid_token`); RFC 6750 errors with
 * `WWW-Authenticate`. Answers `sub` and the claims of the account's latest login that the token's
 * scopes release (`profile`: `name`, `preferred_username`, `steam_id`, ...).
 */
export function userinfoHandler(server: AuthorizationServer): RequestHandler {
  // With resources declared, a token for another resource (an MCP server's) is not one to read the
  // person's claims with: UserInfo takes the tokens of the default resource, or of none.
  const resource = server.resources.all.length ? (server.resources.fallback ?? null) : undefined;
  const realm = new URL(server.urls.base).host;
  const steps = [...bearerSteps({ realm, scopes: ['openid'], resource }), answerClaims];
  const userinfo = (method: 'GET' | 'POST') =>
    handle(
      server,
      endpoint<BearerStepContext>({ name: 'userinfo', method, path: '/oauth/userinfo', kind: 'json', steps }),
    );
  const answers = { GET: userinfo('GET'), POST: userinfo('POST') };
  return (req, res, next) => (req.method === 'POST' ? answers.POST : answers.GET)(req, res, next);
}
