import { html, type SafeHtml } from './html.js';
import type { ConsentPageData, ErrorPageData, PageRenderers, SelectionPageData } from './types.js';

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2430}
main{max-width:28rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002}
h1{font-size:1.35rem;margin:0 0 1rem}
ul{padding-left:1.2rem}
.providers{list-style:none;padding:0}
.providers a,button{display:block;width:100%;box-sizing:border-box;margin:.5rem 0;padding:.75rem 1rem;border-radius:8px;
border:1px solid #2f5bd3;font:inherit;text-align:center;text-decoration:none;cursor:pointer}
.providers a,button.primary{background:#2f5bd3;color:#fff}
button.secondary{background:#fff;color:#2f5bd3}
.muted{color:#5b6473;font-size:.9rem}`;

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
        ${data.providers.map((p) => html`<li><a href="${p.loginUrl}">${p.name}</a></li>`)}
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
      ${scopes}
      <form method="post" action="${data.action}">
        <input type="hidden" name="transaction" value="${data.fields.transaction}" />
        <input type="hidden" name="csrf" value="${data.fields.csrf}" />
        <button class="primary" type="submit" name="decision" value="allow">
          Trust ${data.applicationName}
        </button>
        <button class="secondary" type="submit" name="decision" value="deny">Deny</button>
      </form>
      <p class="muted">You will not be asked again for this application. Client id: ${data.clientId}</p>`,
  );
}

function error(data: ErrorPageData): string {
  return layout(
    data.title,
    html`<h1>${data.title}</h1>
      <p>${data.message}</p>
      ${data.retryUrl ? html`<p><a href="${data.retryUrl}">Try again</a></p>` : ''}
      ${data.otherProviderUrl ? html`<p><a href="${data.otherProviderUrl}">Choose another provider</a></p>` : ''}`,
  );
}

/** The built-in pages: plain HTML with no scripts, readable on a phone. */
export const defaultPages: PageRenderers = { selection, consent, error };
