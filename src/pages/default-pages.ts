import { html, type SafeHtml } from './html.js';
import { avatar, layout, providerButton, signOutForm, when } from './layout.js';
import { developerApp, developerAppForm, developers } from './developer-pages.js';
import type {
  ApplicationsPageData,
  ConsentPageData,
  DeviceCodePageData,
  DeviceDonePageData,
  ErrorPageData,
  PageRenderers,
  SelectionPageData,
  SignOutPageData,
} from './types.js';

function selection(data: SelectionPageData): string {
  return layout(
    'Choose how to sign in',
    html`<h1>Sign in to continue to ${data.applicationName}</h1>
      <p>Choose your OpenID provider:</p>
      <ul class="providers">
        ${data.providers.map(providerButton)}
      </ul>`,
  );
}

function consent(data: ConsentPageData): string {
  const scopes = data.scopes.length
    ? html`<p>It asks for:</p>
        <ul>
          ${data.scopes.map((s) => html`<li><strong>${s.name}</strong>${s.description ? html`: ${s.description}` : ''}</li>`)}
        </ul>`
    : html``;
  return layout(
    `Trust ${data.applicationName}?`,
    html`<h1>Do you trust ${data.applicationName}?</h1>
      <p>
        <strong>${data.applicationName}</strong> wants to access your account. It will not see your password.
      </p>
      ${
        data.clientDocument
          ? html`<p class="warning client-document">
              This application is not registered by this site: it describes itself at
              <strong>${data.clientDocument.documentHost}</strong>, and after your answer you go back to
              <strong>${data.clientDocument.redirectHost}</strong>. Trust it only if you know both.
            </p>`
          : ''
      }
      ${
        data.selfRegistered
          ? html`<p class="warning self-registered">
              ${data.applicationName} registered itself with this site: its name is its own claim, not checked
              by anyone here, and after your answer you go back to
              <strong>${data.selfRegistered.redirectHost}</strong>. Trust it only if you are connecting it
              yourself.
            </p>`
          : ''
      }
      ${data.maker ? makerNotice(data.maker) : ''}
      ${data.description ? html`<p class="description">“${data.description}”</p>` : ''}
      ${data.homepageUri ? html`<p class="homepage"><a href="${data.homepageUri}" rel="noopener noreferrer">${data.homepageUri}</a></p>` : ''}
      ${scopes}
      ${data.resource ? html`<p class="resource">For use at ${data.resource.name ? html`<strong>${data.resource.name}</strong> (${data.resource.uri})` : html`<strong>${data.resource.uri}</strong>`}.</p>` : ''}
      ${
        data.userCode
          ? html`<p class="code-check">
              Approve only if your device shows this code:
              <strong class="user-code">${data.userCode}</strong>
            </p>`
          : ''
      }
      <form method="post" action="${data.action}">
        <input type="hidden" name="transaction" value="${data.fields.transaction}" />
        <input type="hidden" name="csrf" value="${data.fields.csrf}" />
        <button class="primary" type="submit" name="decision" value="allow">
          Trust ${data.applicationName}
        </button>
        <button class="secondary" type="submit" name="decision" value="deny">Deny</button>
      </form>
      <p class="muted">
        ${data.asksEachTime ? 'You will be asked each time it signs in.' : 'You will not be asked again for this application.'}
        Client id: ${data.clientId}
      </p>
      ${data.signedInAs ? html`<p class="muted account">${avatar(data.picture)}Signed in as ${data.signedInAs}${data.provider ? html` at ${data.provider}` : ''}</p>` : ''}
      ${data.switchAccount ? signOutForm(data.switchAccount, 'Not you? Sign in as someone else') : ''}`,
  );
}

/** Who made a member's application, whether the operator vouches for it, and where the browser goes. */
function makerNotice(maker: NonNullable<ConsentPageData['maker']>): SafeHtml {
  const name = html`<strong><bdi>${maker.name}</bdi></strong>`;
  const back = maker.redirectHost
    ? html` After your answer you go back to <strong>${maker.redirectHost}</strong>.`
    : '';
  const verdict = maker.verified
    ? 'The operator has verified it.'
    : 'The operator has not verified it: trust it only if you know its maker.';
  return html`<p class="${maker.verified ? 'maker' : 'maker warning'}">
    Made by ${name}, a member of this site.${back} ${verdict}
  </p>`;
}

function error(data: ErrorPageData): string {
  return layout(
    data.title,
    html`<h1>${data.title}</h1>
      <p>${data.message}</p>
      ${data.retryUrl ? html`<p><a href="${data.retryUrl}">Try again</a></p>` : ''}
      ${data.otherProviderUrl ? html`<p><a href="${data.otherProviderUrl}">Choose another provider</a></p>` : ''}
      ${data.backUrl ? html`<p><a href="${data.backUrl}">${data.backLabel ?? 'Go back'}</a></p>` : ''}`,
  );
}

function applications(data: ApplicationsPageData): string {
  const list = data.applications.length
    ? html`<ul class="apps">
        ${data.applications.map(
          (app) =>
            html`<li>
              <h2>${app.applicationName}</h2>
              ${
                app.scopes.length
                  ? html`<p>
                      Can: ${app.scopes.map((s, i) => html`${i ? ', ' : ''}${s.description || s.name}`)}
                    </p>`
                  : ''
              }
              <p class="muted">${authorizedLine(app)}</p>
              <form method="post" action="${data.revokeAction}">
                <input type="hidden" name="client_id" value="${app.clientId}" />
                <input type="hidden" name="csrf" value="${data.csrf}" />
                <button class="secondary" type="submit">Revoke access of ${app.applicationName}</button>
              </form>
            </li>`,
        )}
      </ul>`
    : html`<p>You have not authorized any application.</p>`;
  return layout(
    'Authorized applications',
    html`<h1>Authorized applications</h1>
      ${
        data.revoked === undefined
          ? ''
          : html`<p class="notice" role="status">${data.revoked} no longer has access to your account.</p>`
      }
      <p class="muted account">${avatar(data.picture)}Signed in as ${data.signedInAs}</p>
      ${list}
      <p class="muted">
        Revoking ends the application's access at once; it must ask you again to use your account.
      </p>
      ${data.signOut ? signOutForm(data.signOut, 'Sign out') : ''}`,
  );
}

/** The built-in pages: plain HTML with no scripts, readable on a phone. */
export const defaultPages: PageRenderers = {
  selection,
  consent,
  error,
  applications,
  signOut,
  deviceCode,
  deviceDone,
  developers,
  developerAppForm,
  developerApp,
};

function deviceCode(data: DeviceCodePageData): string {
  return layout(
    'Connect a device',
    html`<h1>Connect a device</h1>
      <p>Enter the code your device shows.</p>
      ${data.error ? html`<p class="error" role="alert" id="code-error">${data.error}</p>` : ''}
      <form method="post" action="${data.action}">
        <label for="user_code">Code</label>
        <input
          id="user_code"
          name="user_code"
          class="code-input"
          value="${data.userCode ?? ''}"
          placeholder="XXXX-XXXX"
          autocomplete="one-time-code"
          autocapitalize="characters"
          spellcheck="false"
          maxlength="20"
          required
          autofocus
          ${data.error ? html`aria-invalid="true" aria-describedby="code-error"` : ''}
        />
        <button class="primary" type="submit">Continue</button>
      </form>
      ${data.signedInAs ? html`<p class="muted">Signed in as ${data.signedInAs}</p>` : ''}`,
  );
}

function deviceDone(data: DeviceDonePageData): string {
  return data.approved
    ? layout(
        'Device connected',
        html`<h1>Device connected</h1>
          <p>${data.applicationName} is signing in on your device. You can close this page.</p>`,
      )
    : layout(
        'Request denied',
        html`<h1>Request denied</h1>
          <p>${data.applicationName} was not given access. You can close this page.</p>`,
      );
}

function signOut(data: SignOutPageData): string {
  if (!data.form) {
    return layout(
      'Signed out',
      html`<h1>You are signed out</h1>
        <p>You can close this page.</p>`,
    );
  }
  const asking = data.applicationName ? html`${data.applicationName} asks you to sign out.` : '';
  return layout(
    'Sign out?',
    html`<h1>Sign out?</h1>
      <p>${asking} ${data.signedInAs ? html`You are signed in as ${data.signedInAs}.` : ''}</p>
      ${signOutForm(data.form, 'Sign out')}`,
  );
}

/** When the user trusted the application, and when they gave it more access, if they did. */
function authorizedLine(app: { authorizedAt: number; updatedAt: number; lastUsedAt?: number }): SafeHtml {
  const more = app.updatedAt > app.authorizedAt ? html` · more access given ${when(app.updatedAt)}` : '';
  const used = app.lastUsedAt === undefined ? '' : html` · last used ${when(app.lastUsedAt)}`;
  return html`Authorized ${when(app.authorizedAt)}${more}${used}`;
}
