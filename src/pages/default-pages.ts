import { html, type SafeHtml } from './html.js';
import type {
  ApplicationsPageData,
  ConsentPageData,
  DeviceCodePageData,
  DeviceDonePageData,
  ErrorPageData,
  PageRenderers,
  ProviderChoice,
  SelectionPageData,
  SignOutForm,
  SignOutPageData,
} from './types.js';

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2430}
main{max-width:28rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002}
h1{font-size:1.35rem;margin:0 0 1rem}
ul{padding-left:1.2rem}
.providers{list-style:none;padding:0}
.providers a,button{display:block;width:100%;box-sizing:border-box;margin:.5rem 0;padding:.75rem 1rem;border-radius:8px;
border:1px solid #2f5bd3;font:inherit;text-align:center;text-decoration:none;cursor:pointer}
.providers a,button.primary{background:#2f5bd3;color:#fff}
.providers .icon{width:1.25rem;height:1.25rem;vertical-align:-.25rem;margin-right:.5rem;border-radius:4px}
button.secondary{background:#fff;color:#2f5bd3}
.muted{color:#5b6473;font-size:.9rem}
.apps{list-style:none;padding:0}.apps li{border-top:1px solid #e3e6eb;padding:.75rem 0}
.apps h2{font-size:1.05rem;margin:0}.apps p{margin:.25rem 0}
.notice{background:#e8f3ec;border-radius:8px;padding:.5rem .75rem}
label{display:block;font-weight:600;margin:.5rem 0 .25rem}
.code-input{display:block;width:100%;box-sizing:border-box;padding:.75rem;font:600 1.4rem/1.2 ui-monospace,monospace;
letter-spacing:.15em;text-transform:uppercase;border:1px solid #8a94a6;border-radius:8px}
.code-input:focus,button:focus,a:focus{outline:3px solid #f0b400;outline-offset:2px}
.error{background:#fdecea;color:#8a1c12;border-radius:8px;padding:.5rem .75rem}
.user-code{font:600 1.2rem ui-monospace,monospace;letter-spacing:.1em}
.account{display:flex;align-items:center;gap:.5rem}.avatar{border-radius:4px;flex:none}`;

function layout(title: string, body: SafeHtml): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title}</title>
        <style>
          ${STYLE}
        </style>
      </head>
      <body>
        <main>${body}</main>
      </body>
    </html>`.value;
}

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

/** One provider's button: its icon, if it has one, and its name. */
// prettier-ignore
function providerButton(p: ProviderChoice): SafeHtml {
  const icon = p.icon ? html`<img class="icon" src="${p.icon}" alt="" />` : '';
  return html`<li><a href="${p.loginUrl}">${icon}${p.name}</a></li>`;
}

/** The signed-in account's avatar, beside its name; nothing without one. */
function avatar(picture: string | undefined): SafeHtml | '' {
  return picture ? html`<img class="avatar" src="${picture}" alt="" width="32" height="32" />` : '';
}

/** A sign-out button: its own form, so the page's main form stays the first one. */
function signOutForm(form: SignOutForm, label: string): SafeHtml {
  return html`<form method="post" action="${form.action}">
    ${Object.entries(form.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
    <button class="secondary" type="submit">${label}</button>
  </form>`;
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

/** A date a person reads, in UTC so the page says the same wherever it is rendered. */
function when(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
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
function authorizedLine(app: { authorizedAt: number; updatedAt: number }): SafeHtml {
  const more = app.updatedAt > app.authorizedAt ? html` · more access given ${when(app.updatedAt)}` : '';
  return html`Authorized ${when(app.authorizedAt)}${more}`;
}
