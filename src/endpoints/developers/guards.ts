import { hashSecret } from '../../crypto/secrets.js';
import { page, redirect } from '../../http/answer.js';
import { findProvider } from '../../login/providers.js';
import { ephemeralKeys } from '../../storage/keys.js';
import { loginUrl, providerChoices } from '../shared/login-links.js';
import type { DeveloperContext } from './context.js';
import { draftFields } from './form.js';
import { developerError } from './views.js';

/*
 * What stands before a secret is made on the developer page: a recent sign-in at the provider, and
 * a form sent once.
 */

/**
 * Whether the member signed in at their provider recently enough to make a secret
 * (`developerApps.recentLoginMinutes`). If not, the form is kept as a draft and the browser goes
 * to the provider (or the selection page, if the provider is no longer configured); after the
 * sign-in the form comes back filled in, to be sent again. A member the host signed in is told to
 * sign in again on the host's site: the library cannot send them there.
 */
export async function recentSignIn(ctx: DeveloperContext, returnTo: string): Promise<boolean> {
  const { server, user } = ctx;
  const within = server.options.developerApps.recentLoginMinutes * 60_000;
  if (user.authTime !== undefined && server.clock() - user.authTime <= within) return true;
  if (user.viaHost) {
    const message = 'Making a secret needs a recent sign-in. Sign in again on this site, then come back.';
    ctx.answer = page(developerError(ctx, 403, 'Sign in again first', message), 403);
    return false;
  }
  const session = ctx.session!;
  session.write().developerDraft = { returnTo, userId: user.id, fields: draftFields(ctx.params) };
  // The sign-in is for this form: an authorization pending in this browser would take it over.
  session.clearPending();
  const provider = findProvider(server, user.provider);
  ctx.answer = provider
    ? redirect(loginUrl(server, provider.identifier, 'developers'), 303)
    : page(
        server.pages.selection({
          applicationName: 'the developer page',
          providers: providerChoices(server, 'developers'),
        }),
      );
  return false;
}

/**
 * Whether this is the first time this form is sent: its one-time submission id is recorded
 * (`ephemeral.add`), so a reload of the page that showed a secret makes and shows nothing.
 */
export async function firstSubmission(ctx: DeveloperContext): Promise<boolean> {
  const { server, params } = ctx;
  const submission = params.get('submission') ?? '';
  const now = server.clock();
  const first =
    submission.length >= 32 &&
    (await server.storage.ephemeral.add(
      ephemeralKeys.developerForm(hashSecret(submission)),
      '1',
      now + 86_400_000,
      now,
    ));
  if (first) return true;
  const message =
    'It was done the first time. A secret is shown only once: if you did not keep it, make a new one on the application’s page.';
  ctx.answer = page(developerError(ctx, 409, 'This form was already sent', message), 409);
  return false;
}
