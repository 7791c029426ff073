import { OAuthError } from '../errors/oauth-error.js';
import type { Context, Step } from './pipeline.js';

/**
 * Step of the endpoints that take a form of the library's pages: a cross-site form post is refused
 * even with a valid CSRF token (defence in depth). Browsers send `Origin: null` for our own form
 * because the page's Referrer-Policy is `no-referrer`, so the reliable signal is
 * `Sec-Fetch-Site`; `Origin` is checked when that is absent.
 */
export function sameOrigin(refusal: string): Step<Context> {
  return function checkSameOrigin({ server, req }) {
    const fetchSite = req.get('sec-fetch-site');
    const origin = req.get('origin');
    const crossSite =
      fetchSite !== undefined
        ? fetchSite !== 'same-origin'
        : origin !== undefined && origin !== 'null' && origin !== server.urls.origin;
    if (crossSite) throw new OAuthError('access_denied', refusal, { redirectable: false });
  };
}
