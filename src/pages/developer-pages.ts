import { html, type SafeHtml } from './html.js';
import { avatar, layout, signOutForm, when } from './layout.js';
import type {
  DeveloperAppPageData,
  DeveloperAppFormPageData,
  DeveloperAppSummary,
  DeveloperAppValues,
  DeveloperForm,
  DevelopersPageData,
} from './developer-types.js';
import type { ScopeDescription } from './form-types.js';

/* The developer page's built-in pages: plain HTML forms, no script, readable on a phone. */

const KIND_LABELS = {
  web: 'Web application (a server, or a browser app)',
  native: 'Native app (desktop, mobile, or a command-line tool that opens a browser)',
  device: 'Device (a bot, console or CLI that shows a code: no browser)',
} as const;

export function developers(data: DevelopersPageData): string {
  const list = data.apps.length
    ? html`<ul class="apps">
        ${data.apps.map(
          (app) =>
            html`<li>
              <h2><a href="${app.url}">${app.applicationName}</a></h2>
              <p>${statusBadges(app)}</p>
              <p class="muted">${reachLine(app)}</p>
              ${app.usage ? html`<p class="muted">${usageLine(app.usage)}</p>` : ''}
            </li>`,
        )}
      </ul>`
    : html`<p>You have no applications yet.</p>`;
  return layout(
    'Your applications',
    html`<h1>Your applications</h1>
      ${data.deleted === undefined ? '' : html`<p class="notice" role="status">${data.deleted} was deleted.</p>`}
      <p class="muted account">${avatar(data.picture)}Signed in as ${data.signedInAs}</p>
      ${list}
      ${
        data.createUrl
          ? html`<p><a class="button" href="${data.createUrl}">Create an application</a></p>`
          : html`<p class="warning">${data.createRefusal ?? ''}</p>`
      }
      <p class="muted">A member may have ${data.maxApps} applications.</p>
      ${data.signOut ? signOutForm(data.signOut, 'Sign out') : ''}`,
  );
}

export function developerAppForm(data: DeveloperAppFormPageData): string {
  return layout(
    'Create an application',
    html`<h1>Create an application</h1>
      ${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}
      ${data.error ? html`<p class="error" role="alert" id="form-error">${data.error}</p>` : ''}
      <form method="post" action="${data.form.action}">
        ${hiddenFields(data.form)} ${kindFields(data.values)}
        ${appFields(data.values, data.scopes, data.teams, data.error !== undefined)}
        <p class="muted">
          A confidential application's secret is shown once, right after it is made. Making one needs a
          sign-in within the last ${data.recentLoginMinutes} minutes: you may be asked to sign in again first.
        </p>
        <button class="primary" type="submit">Create the application</button>
      </form>
      <p><a href="${data.backUrl}">Back to your applications</a></p>`,
  );
}

export function developerApp(data: DeveloperAppPageData): string {
  const { app } = data;
  return layout(
    app.applicationName,
    html`<h1>${app.applicationName}</h1>
      ${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}
      ${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
      <p>${statusBadges(app)}</p>
      ${
        data.secret
          ? html`<div class="warning" role="status">
              <p><strong>Your client secret. Copy it now: it is shown this once, never again.</strong></p>
              <code class="secret" id="client-secret">${data.secret}</code>
            </div>`
          : ''
      }
      <dl>
        <dt>Client id</dt>
        <dd><code id="client-id">${app.clientId}</code></dd>
        <dt>Kind</dt>
        <dd>
          ${KIND_LABELS[app.kind]},
          ${app.confidential ? 'confidential (with a secret)' : 'public (no secret)'}
        </dd>
        ${
          app.kind === 'device'
            ? ''
            : html`<dt>Redirect URI</dt>
                <dd>${app.redirectUri}</dd>`
        }
        <dt>Scopes</dt>
        <dd>${app.scopes.map((s, i) => html`${i ? ', ' : ''}${s.name}`)}</dd>
        ${
          app.allowedTeams.length
            ? html`<dt>Only for</dt>
                <dd>${app.allowedTeams.map((t, i) => html`${i ? ', ' : ''}~${t}`)}</dd>`
            : ''
        }
        <dt>Reach</dt>
        <dd>${reachLine(app)}</dd>
        <dt>Issuer</dt>
        <dd>${data.endpoints.issuer}</dd>
        <dt>Authorization endpoint</dt>
        <dd>${data.endpoints.authorization}</dd>
        <dt>Token endpoint</dt>
        <dd>${data.endpoints.token}</dd>
        ${
          app.kind === 'device'
            ? html`<dt>Device authorization endpoint</dt>
                <dd>${data.endpoints.deviceAuthorization}</dd>`
            : ''
        }
      </dl>
      ${data.rotate ? rotateForm(data.rotate, app.previousSecretUntil) : ''}
      ${data.edit ? editForm(data.edit) : ''}
      ${data.delete ? deleteForm(data.delete, app.applicationName) : ''}
      ${
        app.status === 'suspended'
          ? html`<p class="warning">
              The operator has suspended this application: it cannot be changed or deleted.
            </p>`
          : ''
      }
      <p><a href="${data.backUrl}">Back to your applications</a></p>`,
  );
}

function editForm(form: NonNullable<DeveloperAppPageData['edit']>): SafeHtml {
  return html`<h2>Change it</h2>
    <form method="post" action="${form.action}">
      ${hiddenFields(form)} ${appFields(form.values, form.scopes, form.teams, false)}
      <button class="primary" type="submit">Save the changes</button>
    </form>`;
}

function deleteForm(form: DeveloperForm, name: string): SafeHtml {
  return html`<h2>Delete it</h2>
    <form method="post" action="${form.action}">
      ${hiddenFields(form)}
      <label class="choice"
        ><input type="checkbox" name="confirm" value="yes" required /> Delete ${name}: every member's access
        ends at once, and it cannot be undone.</label
      >
      <button class="secondary" type="submit">Delete ${name}</button>
    </form>`;
}

function rotateForm(
  form: DeveloperForm & { overlapChoices: { minutes: number; label: string }[] },
  until?: number,
) {
  return html`<h2>Secret</h2>
    ${until === undefined ? '' : html`<p class="muted">The previous secret works until ${when(until)}.</p>`}
    <form method="post" action="${form.action}">
      ${hiddenFields(form)}
      <label for="overlap">When the new secret is made, the old one</label>
      <select class="field" id="overlap" name="overlap">
        ${form.overlapChoices.map((choice) => html`<option value="${choice.minutes}">${choice.label}</option>`)}
      </select>
      <button class="secondary" type="submit">Make a new secret</button>
    </form>`;
}

/** The kind and confidentiality radios: chosen when an application is created, fixed after. */
function kindFields(values: DeveloperAppValues): SafeHtml {
  return html`<fieldset>
      <legend>Kind</legend>
      ${(['web', 'native', 'device'] as const).map(
        (kind) =>
          html`<label class="choice"
            ><input type="radio" name="kind" value="${kind}" ${values.kind === kind ? html`checked` : ''} />
            ${KIND_LABELS[kind]}</label
          >`,
      )}
    </fieldset>
    <fieldset>
      <legend>Secret</legend>
      <label class="choice"
        ><input
          type="radio"
          name="client_type"
          value="confidential"
          ${values.confidential ? html`checked` : ''}
        />
        Confidential: it runs on a server and keeps a secret</label
      >
      <label class="choice"
        ><input type="radio" name="client_type" value="public" ${values.confidential ? '' : html`checked`} />
        Public: it cannot keep a secret (native apps, browser apps, most devices); it uses PKCE</label
      >
    </fieldset>`;
}

/** The fields an application's form shares between creating and changing it. */
function appFields(
  values: DeveloperAppValues,
  scopes: readonly ScopeDescription[],
  teams: readonly string[],
  invalid: boolean,
): SafeHtml {
  const described = invalid ? html`aria-describedby="form-error"` : '';
  return html`<label for="name">Name (shown to members on the consent page)</label>
    <input
      class="field"
      id="name"
      name="name"
      value="${values.applicationName}"
      maxlength="100"
      required
      ${described}
    />
    ${
      values.kind === 'device' && !invalid
        ? ''
        : html`<label for="redirect_uri">Redirect URI (not for a device)</label>
            <input
              class="field"
              id="redirect_uri"
              name="redirect_uri"
              value="${values.redirectUri}"
              maxlength="500"
              placeholder="https://app.example/callback"
              inputmode="url"
              ${described}
            />`
    }
    <fieldset>
      <legend>Scopes</legend>
      ${scopes.map((scope) =>
        checkbox(
          `scope.${scope.name}`,
          values.scopes.includes(scope.name),
          html`<strong>${scope.name}</strong>${scope.description ? html`: ${scope.description}` : ''}`,
        ),
      )}
    </fieldset>
    ${
      teams.length
        ? html`<fieldset>
            <legend>Only for members of (optional)</legend>
            ${teams.map((team) => checkbox(`team.${team}`, values.teams.includes(team), html`~${team}`))}
          </fieldset>`
        : ''
    }
    <label for="description">Description (optional, shown on the consent page)</label>
    <input class="field" id="description" name="description" value="${values.description}" maxlength="300" />
    <label for="homepage">Home page (optional, https)</label>
    <input
      class="field"
      id="homepage"
      name="homepage"
      value="${values.homepageUri}"
      maxlength="500"
      inputmode="url"
    />
    <label for="post_logout_redirect_uris"
      >Post-logout redirect URIs (optional, OpenID Connect; one per line)</label
    >
    <textarea class="field" id="post_logout_redirect_uris" name="post_logout_redirect_uris" rows="2">
${values.postLogoutRedirectUris}</textarea>`;
}

/** A ticked or unticked box named `name` (sent as `on`), with its label. */
function checkbox(name: string, checked: boolean, label: SafeHtml): SafeHtml {
  return html`<label class="choice"
    ><input type="checkbox" name="${name}" value="on" ${checked ? html`checked` : ''} /> ${label}</label
  >`;
}

function hiddenFields(form: DeveloperForm): SafeHtml[] {
  return Object.entries(form.fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
  );
}

function statusBadges(app: DeveloperAppSummary): SafeHtml {
  const status =
    app.status === 'suspended'
      ? html`<span class="badge">Suspended by the operator</span>`
      : app.status === 'awaiting_approval'
        ? html`<span class="badge">Waiting for the operator's approval</span>`
        : html`<span class="badge ok">Active</span>`;
  return html`${status}
    ${app.verified ? html`<span class="badge ok">Verified</span>` : html`<span class="badge">Not verified</span>`}
    <span class="badge">${app.kind}</span>`;
}

/** Its last use and 30-day counts (per-app usage). */
function usageLine(usage: NonNullable<DeveloperAppSummary['usage']>): SafeHtml {
  const { token, refresh, bearer } = usage.last30Days;
  const last = usage.lastUsedAt === undefined ? 'Not used yet' : `Last used ${when(usage.lastUsedAt)}`;
  const counts = [
    `${token} ${token === 1 ? 'token' : 'tokens'} issued`,
    `${refresh} ${refresh === 1 ? 'refresh' : 'refreshes'}`,
    `${bearer} bearer ${bearer === 1 ? 'use' : 'uses'}`,
  ];
  return html`${last} · last 30 days: ${counts.join(', ')}`;
}

function reachLine(app: DeveloperAppSummary): SafeHtml {
  const cap =
    app.reachCap === undefined ? '' : html` (at most ${app.reachCap} until the operator verifies it)`;
  const last =
    app.lastAuthorizedAt === undefined ? '' : html` · last authorized ${when(app.lastAuthorizedAt)}`;
  return html`${app.members} ${app.members === 1 ? 'member' : 'members'} authorized it${cap}${last} · created
  ${when(app.createdAt)}`;
}
