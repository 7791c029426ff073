/**
 * `openid-oauth-bridge/pages`: what an app needs to replace one of the library's HTML pages
 * (`pages: { consent: (data) => … }`): the data each page receives, the default pages to fall
 * back on, and the `html` template that escapes what it shows. See docs/pages.md.
 *
 * @packageDocumentation
 */
export { html, SafeHtml, type Interpolation } from './html.js';
export { defaultPages } from './default-pages.js';
export type * from './types.js';
export type * from './developer-types.js';
