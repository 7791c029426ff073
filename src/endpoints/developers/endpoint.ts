import {
  appsOf,
  checkMemberInput,
  createMemberApp,
  creationRefusal,
  deleteMemberApp,
  MemberAppRefused,
  ownedApp,
  reachOf,
  rotateMemberSecret,
  scopeAllowance,
  updateMemberApp,
  kindOf,
  type Member,
} from '../../clients/members.js';
import { generateSecret, hashSecret, safeEqual } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { eventContext } from '../../events/emit.js';
import { teamsOf } from '../../grants/teams.js';
import { page, redirect } from '../../http/answer.js';
import { findProvider } from '../../login/providers.js';
import type {
  DeveloperAppPageData,
  DeveloperAppSummary,
  DeveloperAppValues,
} from '../../pages/developer-types.js';
import { isPublicClient } from '../../rules/client-kind.js';
import { pictureOf, type SessionUser } from '../../session/state.js';
import { ephemeralKeys } from '../../storage/keys.js';
import type { ClientRecord } from '../../storage/types.js';
import { readPageForm, type FormContext } from '../shared/form.js';
import { identifyUser } from '../shared/identify.js';
import { loadSession } from '../shared/load-session.js';
import { loginUrl, providerChoices, signOutForm } from '../shared/login-links.js';
import { endpoint, type Context } from '../shared/pipeline.js';
import { sameOrigin } from '../shared/same-origin.js';
import { draftFields, EMPTY_VALUES, inputOf, storedValues, valuesOf } from './form.js';

/*
 * The developer page (`developerRouter`): a signed-in member's applications. Every decision (what
 * a member may register, the limits, rotation, deletion) is in src/clients/members.ts; these steps
 * read the forms, check who is asking and draw the pages.
 */

/** A developer page request whose member is signed in. */
interface DeveloperContext extends FormContext {
  user: SessionUser;
  member: Member;
  /** The member's application the request names (`client_id`), once `loadOwnedApp` found it. */
  app: ClientRecord;
}

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
  ctx.params = new Map(clientId.length === 1 ? [['client_id', clientId[0]!]] : []);
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

function renderForm(
  ctx: DeveloperContext,
  values: DeveloperAppValues,
  said: { error?: string; notice?: string },
) {
  const { server, user } = ctx;
  return server.pages.developerAppForm({
    signedInAs: user.displayName ?? user.identifier,
    form: { action: `${server.urls.developers}/new`, fields: formFields(ctx, true) },
    values,
    scopes: scopeChoices(ctx),
    teams: [...ctx.member.teams],
    ...said,
    backUrl: server.urls.developers,
    recentLoginMinutes: server.options.developerApps.recentLoginMinutes,
  });
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
    await appPage(ctx, ctx.app, {
      ...(draft !== undefined ? { notice: SIGNED_IN_AGAIN } : notice === undefined ? {} : { notice }),
    }),
  );
}

async function updateApp(ctx: DeveloperContext): Promise<void> {
  const { server, params, member, app } = ctx;
  if (app.disabled) return refuseOnApp(ctx, new MemberAppRefused(SUSPENDED, 403));
  try {
    const checked = checkMemberInput(server, member, inputOf(params, app));
    await updateMemberApp(server, app, checked, eventContext(ctx.req));
  } catch (err) {
    return refuseOnApp(ctx, err);
  }
  ctx.session!.write().developerNotice = 'Your changes were saved.';
  ctx.answer = redirect(appUrl(ctx, app.clientId), 303);
}

const SUSPENDED = 'The operator has suspended this application: it cannot be changed.';

async function rotateSecret(ctx: DeveloperContext): Promise<void> {
  const { server, params, app } = ctx;
  if (app.disabled) return refuseOnApp(ctx, new MemberAppRefused(SUSPENDED, 403));
  if (isPublicClient(app))
    return refuseOnApp(ctx, new MemberAppRefused('A public application has no secret.'));
  const overlap = Number(params.get('overlap') ?? '0');
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
  if (params.get('confirm') !== 'yes') {
    return refuseOnApp(ctx, new MemberAppRefused('Tick the box to confirm the deletion.'));
  }
  await deleteMemberApp(server, app, eventContext(ctx.req));
  ctx.session!.write().developerNotice = app.applicationName;
  ctx.answer = redirect(server.urls.developers, 303);
}

/** The application's page again, with why the form was refused. */
async function refuseOnApp(ctx: DeveloperContext, err: unknown): Promise<void> {
  if (!(err instanceof MemberAppRefused)) throw err;
  ctx.answer = page(await appPage(ctx, ctx.app, { error: err.message }), err.status);
}

/**
 * Whether the member signed in at their provider recently enough to make a secret
 * (`developerApps.recentLoginMinutes`). If not, the form is kept as a draft and the browser goes
 * to the provider (or the selection page, if the provider is no longer configured); after the
 * sign-in the form comes back filled in, to be sent again. A member the host signed in is told to
 * sign in again on the host's site: the library cannot send them there.
 */
async function recentSignIn(ctx: DeveloperContext, returnTo: string): Promise<boolean> {
  const { server, user } = ctx;
  const within = server.options.developerApps.recentLoginMinutes * 60_000;
  if (user.authTime !== undefined && server.clock() - user.authTime <= within) return true;
  if (user.viaHost) {
    const message = 'Making a secret needs a recent sign-in. Sign in again on this site, then come back.';
    ctx.answer = page(developerError(ctx, 403, 'Sign in again first', message), 403);
    return false;
  }
  ctx.session!.write().developerDraft = { returnTo, fields: draftFields(ctx.params) };
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
async function firstSubmission(ctx: DeveloperContext): Promise<boolean> {
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

/** An error page of the developer page, whose way back is the member's application list. */
function developerError({ server }: Context, status: number, title: string, message: string): string {
  return server.pages.error({
    status,
    title,
    message,
    backUrl: server.urls.developers,
    backLabel: 'Back to your applications',
  });
}

/** The hidden fields of the page's forms: the session's CSRF token, and a submission id for those that make a secret. */
function formFields(ctx: DeveloperContext, once: boolean, clientId?: string): Record<string, string> {
  const session = ctx.session!;
  const csrf = session.state.developerCsrf ?? (session.write().developerCsrf = generateSecret());
  return {
    csrf,
    ...(clientId === undefined ? {} : { client_id: clientId }),
    ...(once ? { submission: generateSecret() } : {}),
  };
}

function appUrl(ctx: Context, clientId: string): string {
  return `${ctx.server.urls.developers}/app?${new URLSearchParams({ client_id: clientId })}`;
}

function scopeChoices({ server }: Context) {
  return scopeAllowance(server).map((name) => ({ name, description: server.options.scopes[name] ?? '' }));
}

async function summaryOf(ctx: DeveloperContext, app: ClientRecord): Promise<DeveloperAppSummary> {
  const { server } = ctx;
  const reach = await reachOf(server, app.clientId);
  const cap = server.options.developerApps.unverifiedReach;
  return {
    clientId: app.clientId,
    applicationName: app.applicationName,
    kind: kindOf(app),
    confidential: !isPublicClient(app),
    status: app.disabled ? 'suspended' : app.awaitingApproval ? 'awaiting_approval' : 'active',
    verified: app.verified === true,
    ...reach,
    ...(cap !== false && app.verified !== true ? { reachCap: cap } : {}),
    createdAt: app.createdAt,
    url: appUrl(ctx, app.clientId),
  };
}

async function appPage(
  ctx: DeveloperContext,
  app: ClientRecord,
  said: { secret?: string; notice?: string; error?: string },
): Promise<string> {
  const { server, user } = ctx;
  const { urls, options } = server;
  const max = options.developerApps.maxSecretOverlapMinutes;
  const previous = app.previousSecret;
  const data: DeveloperAppPageData = {
    signedInAs: user.displayName ?? user.identifier,
    app: {
      ...(await summaryOf(ctx, app)),
      redirectUri: app.redirectUri,
      scopes: app.scopes.map((name) => ({ name, description: options.scopes[name] ?? '' })),
      ...(app.description ? { description: app.description } : {}),
      ...(app.homepageUri ? { homepageUri: app.homepageUri } : {}),
      postLogoutRedirectUris: app.postLogoutRedirectUris ?? [],
      allowedTeams: app.allowedTeams ?? [],
      ...(previous && previous.expiresAt > server.clock() ? { previousSecretUntil: previous.expiresAt } : {}),
    },
    ...said,
    endpoints: {
      issuer: urls.issuer,
      authorization: urls.authorization,
      token: urls.token,
      deviceAuthorization: urls.deviceAuthorization,
    },
    edit: {
      action: `${urls.developers}/app/update`,
      fields: formFields(ctx, false, app.clientId),
      values: storedValues(app),
      scopes: scopeChoices(ctx),
      teams: [...new Set([...ctx.member.teams, ...(app.allowedTeams ?? [])])],
    },
    ...(isPublicClient(app)
      ? {}
      : {
          rotate: {
            action: `${urls.developers}/app/rotate`,
            fields: formFields(ctx, true, app.clientId),
            overlapChoices: overlapChoices(max),
          },
        }),
    delete: { action: `${urls.developers}/app/delete`, fields: formFields(ctx, false, app.clientId) },
    backUrl: urls.developers,
  };
  return server.pages.developerApp(data);
}

/** The overlaps a member may choose: none, then an hour and a day within the operator's bound. */
function overlapChoices(max: number): { minutes: number; label: string }[] {
  const choices = [{ minutes: 0, label: 'stops working at once' }];
  for (const [minutes, label] of [
    [60, 'keeps working for an hour'],
    [1440, 'keeps working for a day'],
    [10080, 'keeps working for a week'],
  ] as const) {
    if (minutes <= max) choices.push({ minutes, label });
  }
  if (max > 0 && !choices.some((choice) => choice.minutes === max)) {
    choices.push({ minutes: max, label: `keeps working for ${max} minutes` });
  }
  return choices;
}
