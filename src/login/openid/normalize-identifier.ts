import { parseHttpUrl } from './realm.js';

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/**
 * The normal form of an http(s) identifier URL, so that one identity spelled two ways is one key:
 * the syntax-based normalisation of RFC 3986 section 6.2.2 and the scheme-based one of 6.2.3, as
 * OpenID 2.0 section 7.2 asks. Scheme and host in lower case, IDN hosts in punycode, the default
 * port and empty path dropped (`http://a` is `http://a/`), dot segments removed, percent-encoded
 * unreserved characters decoded (`%7E` is `~`), other percent-encodings in upper case (`%2f` is
 * `%2F`).
 *
 * What RFC 3986 does not call equivalent stays apart: a trailing slash (`/id/1` and `/id/1/`), an
 * empty query, and the fragment, which OpenID 2.0 section 11.5.1 uses to tell a recycled
 * identifier from its former owner's (`#2`); the fragment is kept, normalised like the rest.
 * Resolves `null` for anything but an http(s) URL without credentials (XRIs among them).
 *
 * Idempotent: `normalizeIdentifier(normalizeIdentifier(x)) === normalizeIdentifier(x)`.
 *
 * @example
 * normalizeIdentifier('HTTPS://Steamcommunity.COM:443/openid/./id/%37656'); // 'https://steamcommunity.com/openid/id/7656'
 * @see OpenID 2.0 section 7.2; RFC 3986 sections 6.2.2 and 6.2.3
 */
export function normalizeIdentifier(value: string): string | null {
  const url = parseHttpUrl(value);
  if (url === null) return null;
  // The URL parser did scheme, host, port, empty path and the dot segments spelled out or
  // percent-encoded. Decoding may spell out new ones (`%2E%2E`), which the setter removes.
  url.pathname = normalizePercentEncoding(url.pathname);
  if (url.search !== '') url.search = normalizePercentEncoding(url.search);
  if (url.hash !== '') url.hash = normalizePercentEncoding(url.hash);
  return url.href;
}

/** RFC 3986 6.2.2.1 and 6.2.2.2: `%61` becomes `a`, `%2f` becomes `%2F`. */
function normalizePercentEncoding(part: string): string {
  return part.replace(/%([0-9A-Fa-f]{2})/g, (_match, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}
