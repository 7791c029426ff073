import { OAuthError } from '../../errors/oauth-error.js';
import type { Context } from './pipeline.js';
import { isSubject, type HostAccount } from '../../login/accounts.js';

/**
 * Step: who is signed in. The host's own signed-in account comes first (`authenticatedAccount`:
 * a site that already signs its users in sends them through no second login), then the user of
 * the login session. Runs after `loadSession`.
 */
export function identifyUser(ctx: Context): void | Promise<void> {
  const hook = ctx.server.options.authenticatedAccount;
  if (hook === undefined) {
    ctx.user = ctx.session!.state.user;
    return;
  }
  return Promise.resolve(hook(ctx.req)).then((account) => identifyHostAccount(ctx, account));
}

function identifyHostAccount(ctx: Context, account: HostAccount | null | undefined): void {
  if (account === undefined || account === null) {
    if (ctx.req.session === undefined) ctx.server.warnOnce(NO_HOST_SESSION);
    ctx.user = ctx.session!.state.user;
    return;
  }
  if (typeof account.accountId !== 'string' || !isSubject(ctx.server, account.accountId)) {
    throw new OAuthError('server_error', 'The host returned no account.', {
      redirectable: false,
      cause: new TypeError(
        'authenticatedAccount must resolve { accountId (1 to 255 characters; printable ASCII with OpenID Connect on), displayName?, authTime? }',
      ),
    });
  }
  ctx.user = {
    id: account.accountId,
    identifier: account.accountId,
    provider: '',
    viaHost: true,
    ...(typeof account.displayName === 'string' ? { displayName: account.displayName } : {}),
    ...(Number.isSafeInteger(account.authTime) ? { authTime: account.authTime } : {}),
    ...(Array.isArray(account.teams) && account.teams.every((team) => typeof team === 'string')
      ? { hostTeams: account.teams }
      : {}),
  };
}

/** Why a host's signed-in users may be asked to sign in again: said once (issue 29). */
const NO_HOST_SESSION =
  "authenticatedAccount returned no account, and no express-session of your app ran before the library's routes (req.session is not set). If your hook reads your app's session, mount your express-session before the library's routers, or pass it as session.middleware.";
