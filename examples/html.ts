import { html, type SafeHtml } from '../src/pages/index.js';

// The library's escaping template (in your app: `from 'openid-oauth-bridge/pages'`).
export { html };
export type Markup = SafeHtml;

/** A complete page of the demo client. */
export function page(title: string, body: Markup, head: Markup = html``): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title}</title>
        <style>
          body {
            font:
              16px/1.5 system-ui,
              sans-serif;
            max-width: 42rem;
            margin: 2rem auto;
            padding: 0 1rem;
            color: #1d2430;
          }
          a.button,
          button {
            display: inline-block;
            margin: 0.25rem 0.5rem 0.25rem 0;
            padding: 0.5rem 1rem;
            border-radius: 6px;
            border: 1px solid #2f5bd3;
            background: #2f5bd3;
            color: #fff;
            font: inherit;
            text-decoration: none;
            cursor: pointer;
          }
          form {
            display: inline;
          }
          code,
          pre {
            background: #f1f3f6;
            padding: 0.1rem 0.3rem;
            border-radius: 4px;
          }
          pre {
            padding: 0.75rem;
            overflow: auto;
          }
          .error {
            color: #a11;
          }
          .muted {
            color: #5b6473;
            font-size: 0.9rem;
          }
        </style>
        ${head}
      </head>
      <body>
        <p class="muted">
          Demo client application, a separate app on its own origin. <a href="/">Home</a> ·
          <a href="/implicit">Implicit flow</a>
        </p>
        ${body}
      </body>
    </html> `.value;
}
