import {
  appsOf,
  checkMemberInput,
  creationRefusal,
  MemberAppRefused,
  ownedApp,
} from '../../clients/members.js';
import {
  createMemberApp,
  deleteMemberApp,
  rotateMemberSecret,
  updateMemberApp,
} from '../../clients/member-changes.js';
import type { DeveloperContext } from './context.js';
import { firstSubmission, recentSignIn } from './guards.js';
import { appPage, appUrl, developerError, renderForm, summaryOf } from './views.js';
import { safeEqual } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { eventContext } from '../../events/emit.js';
import { teamsOf } from '../../grants/teams.js';
import { page, redirect } from '../../http/answer.js';
import type { DeveloperAppValues } from '../../pages/developer-types.js';
import { isPublicClient } from '../../rules/client-kind.js';
import { pictureOf } from '../../session/state.js';
import { readPageForm } from '../shared/form.js';
import { identifyUser } from '../shared/identify.js';
import { loadSession } from '../shared/load-session.js';
import { providerChoices, signOutForm } from '../shared/login-links.js';
import { endpoint } from '../shared/pipeline.js';
import { sameOrigin } from '../shared/same-origin.js';
import { EMPTY_VALUES, inputOf, valuesOf } from './form.js';

/*
 * The developer page (`developerRouter`): a signed-in member's applications. Every decision (what
 * a member may register, the limits, rotation, deletion) is in src/clients/members.ts; these steps
 * read the forms, check who is asking and draw the pages.
 */

const SAME_SITE = 'The form was submitted from another site.';

/** `GET /developers`: the member's applications; a visitor chooses a provider to sign in first. */
export const developersEndpoint = endpoint<DeveloperContext>({
  name: 'developers',
  method: 'GET',
  path: '/developers',
  kind: 'page',
  steps: [loadSession, identifyUser, signInFirst, identifyMember, showApps],
});

/** `GET /developers/new`: the form that creates an application. */
export const newAppEndpoint = endpoint<DeveloperContext>({
  name: 'developers_new',
  method: 'GET',
  path: '/developers/new',
  kind: 'page',
  steps: [loadSession, identifyUser, signInFirst, identifyMember, showNewForm],
});

/** `POST /developers/new`: creates the application; a confidential one's secret is shown this once. */
export const createAppEndpoint = endpoint<DeveloperContext>({
  name: 'developers_create',
  method: 'POST',
  path: '/developers/new',
  kind: 'page',
  steps: [
    sameOrigin(SAME_SITE),
    readPageForm('8kb', 40),
    loadSession,
    identifyUser,
    requireMember,
    identifyMember,
    createApp,
  ],
});

/** `GET /developers/app?client_id=…`: one of the member's applications. */
export const appEndpoint = endpoint<DeveloperContext>({
  name: 'developers_app',
  method: 'GET',
  path: '/developers/app',
  kind: 'page',
  steps: [loadSession, identifyUser, signInFirst, identifyMember, readQuery, loadOwnedApp, showApp],
});

/** `POST /developers/app/update`: changes the application (not its kind). */
export const updateAppEndpoint = endpoint<DeveloperContext>({
  name: 'developers_update',
  method: 'POST',
  path: '/developers/app/update',
  kind: 'page',
  steps: formSteps(updateApp),
});

/** `POST /developers/app/rotate`: a new secret, shown once; the old one may work a while longer. */
export const rotateAppEndpoint = endpoint<DeveloperContext>({
  name: 'developers_rotate',
  method: 'POST',
  path: '/developers/app/rotate',
  kind: 'page',
  steps: formSteps(rotateSecret),
});

/** `POST /developers/app/delete`: deletes the application, ending every member's access. */
export const deleteAppEndpoint = endpoint<DeveloperContext>({
  name: 'developers_delete',
  method: 'POST',
  path: '/developers/app/delete',
  kind: 'page',
  steps: formSteps(deleteApp),
});

/** The steps of a form about one application: same site, signed in, CSRF, the member's own. */
function formSteps(last: (ctx: DeveloperContext) => Promise<void>) {
  return [
    sameOrigin(SAME_SITE),
    readPageForm('8kb', 40),
    loadSession,
    identifyUser,
    requireMember,
    identifyMember,
    loadOwnedApp,
    last,
  ];
}

/** Step of the pages: a visitor who is not signed in chooses a provider, for the developer page. */
function signInFirst(ctx: DeveloperContext): void {
  if (ctx.user) return;
  ctx.answer = page(
    ctx.server.pages.selection({
      applicationName: 'the developer page',
      providers: providerChoices(ctx.server, 'developers'),
    }),
  );
}

/** Step of the forms: signed in, and the form carries this session's CSRF token. */
function requireMember(ctx: DeveloperContext): void {
  const expected = ctx.session!.state.developerCsrf;
  if (!ctx.user || !expected || !safeEqual(ctx.params.get('csrf') ?? '', expected)) {
    throw new OAuthError('invalid_request', 'This page has expired. Open the developer page again.', {
      redirectable: false,
    });
  }
}

/** Step: the member, with the teams they belong to now (an application may be limited to them). */
async function identifyMember(ctx: DeveloperContext): Promise<void> {
  const { user, server } = ctx;
  const teams = user.viaHost ? (user.hostTeams ?? []) : await teamsOf(server, user.id);
  ctx.member = { id: user.id, teams };
}

/** Step of `GET /developers/app`: the query's `client_id`, read as a form's parameters are. */
function readQuery(ctx: DeveloperContext): void {
  const clientId = new URL(ctx.req.originalUrl, ctx.server.urls.origin).searchParams.getAll('client_id');
  // A NUL names no client (and PostgreSQL refuses it in text): not found, like any other.
  const one = clientId.length === 1 && !clientId[0]!.includes('\u0000') ? clientId[0]! : undefined;
  ctx.params = new Map(one === undefined ? [] : [['client_id', one]]);
}

/**
 * Step: the member's application the request names. Another member's application, and an id
 * that names none, are the same "not found": ids cannot be probed.
 */
async function loadOwnedApp(ctx: DeveloperContext): Promise<void> {
  const clientId = ctx.params.get('client_id');
  const app = clientId === undefined ? null : await ownedApp(ctx.server, ctx.member, clientId);
  if (app === null) {
    ctx.answer = page(
      developerError(ctx, 404, 'No such application', 'You have no application with this id.'),
      404,
    );
    return;
  }
  ctx.app = app;
}

async function showApps(ctx: DeveloperContext): Promise<void> {
  const { server, user, member } = ctx;
  const session = ctx.session!;
  const notice = session.state.developerNotice;
  if (notice !== undefined) delete session.write().developerNotice;
  const mine = await appsOf(server, member.id);
  const refusal = creationRefusal(server, mine);
  ctx.answer = page(
    server.pages.developers({
      signedInAs: user.displayName ?? user.identifier,
      ...pictureOf(user),
      apps: await Promise.all(mine.map((app) => summaryOf(ctx, app))),
      maxApps: server.options.developerApps.maxAppsPerMember,
      ...(refusal === undefined
        ? { createUrl: `${server.urls.developers}/new` }
        : { createRefusal: refusal }),
      ...(notice === undefined ? {} : { deleted: notice }),
      ...(user.viaHost ? {} : { signOut: signOutForm(ctx, 'done') }),
    }),
  );
}

function showNewForm(ctx: DeveloperContext): void {
  const draft = takeDraft(ctx, `${ctx.server.urls.developers}/new`);
  const values = draft === undefined ? EMPTY_VALUES : valuesOf(new Map(Object.entries(draft)));
  ctx.answer = page(renderForm(ctx, values, draft === undefined ? {} : { notice: SIGNED_IN_AGAIN }));
}

const SIGNED_IN_AGAIN = 'You signed in again: send the form once more to finish.';

/** The draft kept for the page at `returnTo` across a sign-in, taken (shown once). */
function takeDraft(ctx: DeveloperContext, returnTo: string): Record<string, string> | undefined {
  const draft = ctx.session!.state.developerDraft;
  if (draft === undefined || draft.returnTo !== returnTo) return undefined;
  delete ctx.session!.write().developerDraft;
  return draft.fields;
}

async function createApp(ctx: DeveloperContext): Promise<void> {
  const { server, params, member } = ctx;
  const input = inputOf(params);
  let checked;
  try {
    checked = checkMemberInput(server, member, input);
    const refusal = creationRefusal(server, await appsOf(server, member.id));
    if (refusal !== undefined) throw new MemberAppRefused(refusal, 403);
  } catch (err) {
    return refuseForm(ctx, err, valuesOf(params));
  }
  if (input.confidential && !(await recentSignIn(ctx, `${server.urls.developers}/new`))) return;
  if (!(await firstSubmission(ctx))) return;
  let issued;
  try {
    issued = await createMemberApp(server, member, checked, eventContext(ctx.req));
  } catch (err) {
    return refuseForm(ctx, err, valuesOf(params));
  }
  const app = await ownedApp(server, member, issued.clientId);
  ctx.answer = page(
    await appPage(ctx, app!, {
      ...(issued.clientSecret === undefined ? {} : { secret: issued.clientSecret }),
      notice: `${app!.applicationName} was created.${app!.awaitingApproval ? ' It can be used once the operator approves it.' : ''}`,
    }),
  );
}

/** The create form again, with why it was refused (a field, a limit, the rate of creation). */
function refuseForm(ctx: DeveloperContext, err: unknown, values: DeveloperAppValues): void {
  if (!(err instanceof MemberAppRefused)) throw err;
  if (err.retryAfterSeconds !== undefined) ctx.res.setHeader('Retry-After', String(err.retryAfterSeconds));
  ctx.answer = page(renderForm(ctx, values, { error: err.message }), err.status);
}

async function showApp(ctx: DeveloperContext): Promise<void> {
  const session = ctx.session!;
  const draft = takeDraft(ctx, appUrl(ctx, ctx.app.clientId));
  const notice = session.state.developerNotice;
  if (notice !== undefined) delete session.write().developerNotice;
  ctx.answer = page(
    await appPage(
      ctx,
      ctx.app,
      { ...(draft !== undefined ? { notice: SIGNED_IN_AGAIN } : notice === undefined ? {} : { notice }) },
      // The change form the member sent before signing in again, filled in as they left it.
      draft?.name === undefined ? undefined : valuesOf(new Map(Object.entries(draft)), ctx.app),
    ),
  );
}

async function updateApp(ctx: DeveloperContext): Promise<void> {
  const { server, params, member, app } = ctx;
  if (app.disabled) return refuseOnApp(ctx, new MemberAppRefused(SUSPENDED, 403));
  let checked;
  try {
    checked = checkMemberInput(server, member, inputOf(params, app));
  } catch (err) {
    return refuseOnApp(ctx, err);
  }
  // Where the application sends codes is worth a secret: a change needs a recent sign-in too.
  if (!(await recentSignIn(ctx, appUrl(ctx, app.clientId)))) return;
  try {
    await updateMemberApp(server, app, checked, eventContext(ctx.req));
  } catch (err) {
    return refuseOnApp(ctx, err);
  }
  ctx.session!.write().developerNotice = 'Your changes were saved.';
  ctx.answer = redirect(appUrl(ctx, app.clientId), 303);
}

const SUSPENDED = 'The operator has suspended this application: it cannot be changed or deleted.';

async function rotateSecret(ctx: DeveloperContext): Promise<void> {
  const { server, params, app } = ctx;
  if (app.disabled) return refuseOnApp(ctx, new MemberAppRefused(SUSPENDED, 403));
  if (isPublicClient(app))
    return refuseOnApp(ctx, new MemberAppRefused('A public application has no secret.'));
  const overlap = Number(params.get('overlap') ?? '0');
  // A refused overlap is said before the form's one-time id is spent: it can be sent again.
  const max = server.options.developerApps.maxSecretOverlapMinutes;
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > max) {
    return refuseOnApp(
      ctx,
      new MemberAppRefused(`The old secret may keep working for at most ${max} minutes.`),
    );
  }
  if (!(await recentSignIn(ctx, appUrl(ctx, app.clientId)))) return;
  if (!(await firstSubmission(ctx))) return;
  let secret;
  try {
    secret = await rotateMemberSecret(server, app, overlap, eventContext(ctx.req));
  } catch (err) {
    return refuseOnApp(ctx, err);
  }
  const rotated = (await ownedApp(server, ctx.member, app.clientId)) ?? app;
  ctx.answer = page(
    await appPage(ctx, rotated, {
      secret,
      notice:
        overlap > 0
          ? 'A new secret was made; the old one keeps working for a while.'
          : 'A new secret was made; the old one stopped working.',
    }),
  );
}

async function deleteApp(ctx: DeveloperContext): Promise<void> {
  const { server, params, app } = ctx;
  // A suspended application stays, with its owner's suspension, for the operator to see.
  if (app.disabled) return refuseOnApp(ctx, new MemberAppRefused(SUSPENDED, 403));
  if (params.get('confirm') !== 'yes') {
    return refuseOnApp(ctx, new MemberAppRefused('Tick the box to confirm the deletion.'));
  }
  if (!(await recentSignIn(ctx, appUrl(ctx, app.clientId)))) return;
  await deleteMemberApp(server, app, eventContext(ctx.req));
  ctx.session!.write().developerNotice = app.applicationName;
  ctx.answer = redirect(server.urls.developers, 303);
}

/** The application's page again, with why the form was refused. */
async function refuseOnApp(ctx: DeveloperContext, err: unknown): Promise<void> {
  if (!(err instanceof MemberAppRefused)) throw err;
  ctx.answer = page(await appPage(ctx, ctx.app, { error: err.message }), err.status);
}
