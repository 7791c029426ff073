import { html, type SafeHtml } from './html.js';
import type { ProviderChoice, SignOutForm } from './types.js';

/*
 * What every built-in page shares: the layout and its style, dates, the avatar, the sign-out
 * form and the provider buttons.
 */

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
.account{display:flex;align-items:center;gap:.5rem}.avatar{border-radius:4px;flex:none}
.warning{background:#fff4e0;border-radius:8px;padding:.5rem .75rem}
.field{display:block;width:100%;box-sizing:border-box;padding:.6rem;font:inherit;border:1px solid #8a94a6;border-radius:8px}
.field:focus,input:focus{outline:3px solid #f0b400;outline-offset:2px}
fieldset{border:1px solid #e3e6eb;border-radius:8px;margin:.75rem 0;padding:.5rem .75rem}
legend{font-weight:600}.choice{font-weight:400;display:block;margin:.25rem 0}
.secret{display:block;word-break:break-all;font:600 1rem ui-monospace,monospace;background:#f5f6f8;border-radius:8px;padding:.75rem}
dl{margin:.5rem 0}dt{font-weight:600}dd{margin:0 0 .5rem;overflow-wrap:anywhere}
.badge{display:inline-block;font-size:.8rem;border-radius:4px;padding:0 .35rem;background:#e3e6eb}
.badge.ok{background:#e8f3ec}
.button{display:block;text-align:center;padding:.75rem 1rem;border-radius:8px;background:#2f5bd3;color:#fff;text-decoration:none}`;

/** A whole page: the title, and the body inside `<main>`. */
export function layout(title: string, body: SafeHtml): string {
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

/** A date a person reads, in UTC so the page says the same wherever it is rendered. */
export function when(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** One provider's button: its icon, if it has one, and its name. */
// prettier-ignore
export function providerButton(p: ProviderChoice): SafeHtml {
  const icon = p.icon ? html`<img class="icon" src="${p.icon}" alt="" />` : '';
  return html`<li><a href="${p.loginUrl}">${icon}${p.name}</a></li>`;
}

/** The signed-in account's avatar, beside its name; nothing without one. */
export function avatar(picture: string | undefined): SafeHtml | '' {
  return picture ? html`<img class="avatar" src="${picture}" alt="" width="32" height="32" />` : '';
}

/** A sign-out button: its own form, so the page's main form stays the first one. */
export function signOutForm(form: SignOutForm, label: string): SafeHtml {
  return html`<form method="post" action="${form.action}">
    ${Object.entries(form.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
    <button class="secondary" type="submit">${label}</button>
  </form>`;
}
