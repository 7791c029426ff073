import { usageSummary } from '../../usage/summary.js';
import { kindOf, scopeAllowance } from '../../clients/members.js';
import { reachOf } from '../../clients/member-reach.js';
import { generateSecret } from '../../crypto/secrets.js';
import type {
  DeveloperAppPageData,
  DeveloperAppSummary,
  DeveloperAppValues,
} from '../../pages/developer-types.js';
import { isPublicClient } from '../../rules/client-kind.js';
import type { ClientRecord } from '../../storage/types.js';
import type { Context } from '../shared/pipeline.js';
import type { DeveloperContext } from './context.js';
import { storedValues } from './form.js';

/* The developer page's pages, built from a member's applications: the data each renderer gets. */

export function renderForm(
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

/** An error page of the developer page, whose way back is the member's application list. */
export function developerError({ server }: Context, status: number, title: string, message: string): string {
  return server.pages.error({
    status,
    title,
    message,
    backUrl: server.urls.developers,
    backLabel: 'Back to your applications',
  });
}

/** The hidden fields of the page's forms: the session's CSRF token, and a submission id for those that make a secret. */
export function formFields(ctx: DeveloperContext, once: boolean, clientId?: string): Record<string, string> {
  const session = ctx.session!;
  const csrf = session.state.developerCsrf ?? (session.write().developerCsrf = generateSecret());
  return {
    csrf,
    ...(clientId === undefined ? {} : { client_id: clientId }),
    ...(once ? { submission: generateSecret() } : {}),
  };
}

export function appUrl(ctx: Context, clientId: string): string {
  return `${ctx.server.urls.developers}/app?${new URLSearchParams({ client_id: clientId })}`;
}

export function scopeChoices({ server }: Context) {
  return scopeAllowance(server).map((name) => ({ name, description: server.options.scopes[name] ?? '' }));
}

export async function summaryOf(ctx: DeveloperContext, app: ClientRecord): Promise<DeveloperAppSummary> {
  const { server } = ctx;
  const [reach, usage] = await Promise.all([
    reachOf(server, app.clientId),
    usageSummary(server.storage, app.clientId, server.clock()),
  ]);
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
    ...(usage === undefined ? {} : { usage }),
  };
}

export async function appPage(
  ctx: DeveloperContext,
  app: ClientRecord,
  said: { secret?: string; notice?: string; error?: string },
  /** The change form's values, when not the stored ones (a draft kept across a sign-in). */
  editValues: DeveloperAppValues = storedValues(app),
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
    ...(app.disabled
      ? {}
      : {
          edit: {
            action: `${urls.developers}/app/update`,
            fields: formFields(ctx, false, app.clientId),
            values: editValues,
            scopes: scopeChoices(ctx),
            teams: [...new Set([...ctx.member.teams, ...(app.allowedTeams ?? [])])],
          },
        }),
    ...(isPublicClient(app) || app.disabled
      ? {}
      : {
          rotate: {
            action: `${urls.developers}/app/rotate`,
            fields: formFields(ctx, true, app.clientId),
            overlapChoices: overlapChoices(max),
          },
        }),
    ...(app.disabled
      ? {}
      : {
          delete: { action: `${urls.developers}/app/delete`, fields: formFields(ctx, false, app.clientId) },
        }),
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
