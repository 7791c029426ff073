import type { RequestHandler } from 'express';
import type { AuthorizationServer } from '../../config/server.js';
import { json } from '../../http/answer.js';
import { endpoint, handle, type Context, type Endpoint } from '../../http/pipeline.js';
import { hostClaims, releasedClaims } from '../../oidc/id-token.js';
import { bearerOf, requireBearer } from '../bearer/require-bearer.js';

/** Step: the claims of the token's subject that its scopes release, `sub` always. */
async function answerClaims(ctx: Context): Promise<void> {
  const { userId, scopes } = bearerOf(ctx.res);
  const saved = (await ctx.server.storage.users.findClaims?.(userId)) ?? undefined;
  const own = await hostClaims(ctx.server, userId, scopes);
  ctx.answer = json({ ...releasedClaims(saved, scopes), ...own, sub: userId });
}

const userinfo = (method: 'GET' | 'POST'): Endpoint<Context> =>
  endpoint<Context>({
    name: 'userinfo',
    method,
    path: '/oauth/userinfo',
    kind: 'json',
    steps: [answerClaims],
  });

/**
 * The UserInfo endpoint (OpenID Connect Core 5.3), `GET` and `POST /oauth/userinfo`: the access
 * token in `Authorization: Bearer`, checked as {@link requireBearer} checks it, and it must have
 * been granted `openid` (else 403 `insufficient_scope`); RFC 6750 errors with `WWW-Authenticate`.
 * Answers `sub` and the claims of the account's latest login that the token's scopes release
 * (`profile`: `name`, `preferred_username`, `steam_id`).
 */
export function userinfoHandler(server: AuthorizationServer): RequestHandler {
  const guard = requireBearer(server, { scopes: ['openid'] });
  const answers = { GET: handle(server, userinfo('GET')), POST: handle(server, userinfo('POST')) };
  return (req, res, next) => {
    const answer = req.method === 'POST' ? answers.POST : answers.GET;
    guard(req, res, (err?: unknown) => (err === undefined ? answer(req, res, next) : next(err)));
  };
}
