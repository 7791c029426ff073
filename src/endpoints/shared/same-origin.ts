import { OAuthError } from '../../errors/oauth-error.js';
import type { Context, Step } from './pipeline.js';

/**
 * Step of the endpoints that take a form of the library's pages: a cross-site form post is refused
 * even with a valid CSRF token (defence in depth). The reliable signal is `Sec-Fetch-Site`;
 * `Origin` is checked when that is absent. `Origin: null` says nothing about where a post came
 * from (an opaque origin: a sandboxed frame, a `data:` page, or any page whose Referrer-Policy is
 * `no-referrer`, as the library's pages are), so it counts as no `Origin` at all.
 */
export function sameOrigin(refusal: string, options: { unmarked?: 'allow' | 'refuse' } = {}): Step<Context> {
  const refuseUnmarked = options.unmarked === 'refuse';
  return function checkSameOrigin({ server, req }) {
    const fetchSite = req.get('sec-fetch-site');
    const origin = req.get('origin');
    // A form without either header (an old browser, a privacy tool) passes the forms that carry a
    // CSRF token of their own; `unmarked: 'refuse'` is for a form that carries none, whose page
    // must then send a Referrer-Policy that keeps `Origin` on its own posts (`same-origin`).
    const crossSite =
      fetchSite !== undefined
        ? fetchSite !== 'same-origin'
        : origin === undefined || origin === 'null'
          ? refuseUnmarked
          : origin !== server.urls.origin;
    if (crossSite) throw new OAuthError('access_denied', refusal, { redirectable: false });
  };
}
