import { OAuthError } from '../../errors/oauth-error.js';
import { MAX_ID_TOKEN_LENGTH, readIdTokenHint } from '../../oidc/id-token.js';
import { page, redirect } from '../../http/answer.js';
import { optionalParam, parseQueryString, rawQuery } from '../../http/params.js';
import { endpoint, type Context } from '../shared/pipeline.js';
import { identifyUser } from '../shared/identify.js';
import { loadSession } from '../shared/load-session.js';
import type { ClientRecord } from '../../storage/types.js';
import { inService } from '../../rules/client-kind.js';
import { signOutForm, withState } from '../shared/login-links.js';

/** The context of the end-session endpoint. */
interface EndSessionContext extends Context {
  /** The relying party the request names (`id_token_hint`'s audience, or `client_id`). */
  client?: ClientRecord;
  /** Where to send the browser once signed out: a registered post-logout redirect URI. */
  target?: { redirectUri: string; state?: string };
}

const refuse = (description: string) =>
  new OAuthError('invalid_request', description, { redirectable: false });

/**
 * Step: the request, checked before anything is shown or redirected to. An `id_token_hint` must be
 * an ID token this server signed with a key it still publishes (an expired one is fine: it only
 * names the relying party and the user); `client_id`, when also given, must be its audience. A
 * `post_logout_redirect_uri` must be registered for that client, compared exactly; it is never
 * redirected to otherwise. Every refusal is a page.
 */
async function checkEndSessionRequest(ctx: EndSessionContext): Promise<void> {
  const { server } = ctx;
  const params = parseQueryString(rawQuery(ctx.req.originalUrl));
  const [repeated] = params.repeated;
  if (repeated !== undefined) throw refuse('A parameter of the sign-out request is repeated.');
  const hint = optionalParam(params.values, 'id_token_hint', MAX_ID_TOKEN_LENGTH);
  let clientId = optionalParam(params.values, 'client_id');
  if (hint !== undefined) {
    const audience = await hintAudience(ctx, hint);
    if (clientId !== undefined && clientId !== audience) {
      throw refuse('client_id is not the audience of the id_token_hint.');
    }
    clientId = audience;
  }
  const redirectUri = optionalParam(params.values, 'post_logout_redirect_uri');
  const state = optionalParam(params.values, 'state');
  if (clientId !== undefined) {
    const client = await server.storage.clients.find(clientId);
    if (client && inService(client)) ctx.client = client;
  }
  if (redirectUri === undefined) return;
  if (!ctx.client) {
    throw refuse('post_logout_redirect_uri needs the application: send id_token_hint or client_id.');
  }
  if (!(ctx.client.postLogoutRedirectUris ?? []).includes(redirectUri)) {
    throw refuse('post_logout_redirect_uri is not registered for this application.');
  }
  ctx.target = { redirectUri, ...(state === undefined ? {} : { state }) };
}

/** The client an ID token this server signed was issued to; a hint of anyone else is refused. */
async function hintAudience(ctx: EndSessionContext, hint: string): Promise<string> {
  const read = await readIdTokenHint(ctx.server, hint);
  if (read === null) throw refuse('The id_token_hint is not an ID token of this server.');
  return read.audience;
}

/**
 * Step: someone signed in here is asked to confirm (a sign-out is never taken from a link alone);
 * the form is the sign-out form of the library's pages, which ends the session and then follows
 * the verified target. Nobody signed in (or only in the host's own session, which is the host's to
 * end): straight to the target, or a page that says so.
 */
function confirmSignOut(ctx: EndSessionContext): void {
  const { server, user, client, target } = ctx;
  if (!user || user.viaHost) {
    ctx.answer = target ? redirect(withState(target)) : page(server.pages.signOut({}));
    return;
  }
  const state = ctx.session!.write();
  if (target) state.endSession = target;
  else delete state.endSession;
  ctx.answer = page(
    server.pages.signOut({
      ...(client ? { applicationName: client.applicationName } : {}),
      signedInAs: user.displayName ?? user.identifier,
      form: signOutForm(ctx, 'end-session'),
    }),
  );
}

/**
 * OpenID Connect RP-Initiated Logout 1.0: `GET /oauth/end-session` (the `end_session_endpoint`),
 * with `id_token_hint`, `client_id`, `post_logout_redirect_uri` and `state`. It ends the login
 * session as the sign-out form does, after the user confirms.
 */
export const endSessionEndpoint = endpoint<EndSessionContext>({
  name: 'end_session',
  method: 'GET',
  path: '/oauth/end-session',
  kind: 'page',
  steps: [checkEndSessionRequest, loadSession, identifyUser, confirmSignOut],
});
