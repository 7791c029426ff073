import { OAuthError } from '../errors/oauth-error.js';
import type { Context } from '../http/pipeline.js';

/**
 * Step: who is signed in. The host's own signed-in account comes first (`authenticatedAccount`:
 * a site that already signs its users in sends them through no second login), then the user of
 * the login session. Runs after `loadSession`.
 */
export async function identifyUser(ctx: Context): Promise<void> {
  const hook = ctx.server.options.authenticatedAccount;
  const account = hook === undefined ? undefined : await hook(ctx.req);
  if (account === undefined || account === null) {
    ctx.user = ctx.session!.state.user;
    return;
  }
  if (typeof account.accountId !== 'string' || account.accountId === '' || account.accountId.length > 255) {
    throw new OAuthError('server_error', 'The host returned no account.', {
      redirectable: false,
      cause: new TypeError('authenticatedAccount must resolve { accountId: string, displayName?: string }'),
    });
  }
  ctx.user = {
    id: account.accountId,
    identifier: account.accountId,
    provider: '',
    viaHost: true,
    ...(typeof account.displayName === 'string' ? { displayName: account.displayName } : {}),
  };
}
