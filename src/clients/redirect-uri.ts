/**
 * The redirect URI rule. The spec asks both that a redirect_uri "starts with the registered URL"
 * and that it "must exactly match, including scheme, letter case and trailing slash". One rule
 * satisfies both: the registered URI must be a byte-exact prefix of the requested one, and the
 * requested URI either equals it or continues it at a path or query boundary, on the same scheme,
 * host and port. Anything that could make the continuation mean something else (dot segments,
 * encoded slashes or dots, empty segments, userinfo, backslashes, fragments, whitespace, control
 * characters) is refused.
 *
 * | registered                  | requested                            | accepted |
 * |-----------------------------|--------------------------------------|----------|
 * | `https://app.example/cb`    | `https://app.example/cb`             | yes      |
 * | `https://app.example/cb`    | `https://app.example/cb/done?x=1`    | yes      |
 * | `https://app.example/cb`    | `https://app.example/cb?x=1`         | yes      |
 * | `https://app.example/cb`    | `https://app.example/cbx`            | no: not at a boundary |
 * | `https://app.example/cb`    | `https://app.example/cb/`            | yes: a path under it  |
 * | `https://app.example/cb/`   | `https://app.example/cb`             | no: trailing slash missing |
 * | `https://app.example`       | `https://app.example.evil/`          | no: another host |
 * | `https://app.example/cb`    | `https://app.example/cb/../admin`    | no: dot segment |
 * | `https://app.example/cb`    | `HTTPS://app.example/cb`             | no: letter case |
 *
 * @see RFC 6749 section 3.1.2, RFC 9700 section 4.1
 */

/** Longest redirect URI accepted, registered or requested. */
export const MAX_REDIRECT_URI_LENGTH = 2048;

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
/** Also percent-encoded control characters: nothing a path under the registered one needs. */
const FORBIDDEN_IN_PATH = /[#\\@]|%2e|%2f|%5c|%[01][0-9a-f]|%7f/i;

/**
 * A `.` or `..` path segment. Checked directly rather than trusting the URL parser to have
 * removed them: Node's parser keeps `/./` before a segment that starts with `:`.
 */
function hasDotSegment(path: string): boolean {
  return path.split('/').some((segment) => segment === '.' || segment === '..');
}

/**
 * An empty path segment (`//`): a path `//evil.example` on the client's own origin becomes a
 * protocol-relative URL to another host if the client ever redirects to its own path.
 */
function hasEmptySegment(path: string): boolean {
  return path.includes('//');
}

/**
 * Why a URI cannot be registered, or `null` if it can: an absolute http(s) URL in canonical
 * form (as the WHATWG URL parser prints it), without userinfo, query or fragment.
 */
export function registeredRedirectUriProblem(uri: string): string | null {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return 'is too long';
  if (!PRINTABLE_ASCII.test(uri)) return 'contains whitespace, control or non-ASCII characters';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must use http or https';
  if (url.username || url.password) return 'must not contain userinfo';
  if (url.search || uri.includes('?')) return 'must not contain a query';
  if (url.hash || uri.includes('#')) return 'must not contain a fragment';
  if (url.href !== uri) return `must be written in canonical form (${url.href})`;
  if (FORBIDDEN_IN_PATH.test(url.pathname) || hasDotSegment(url.pathname) || hasEmptySegment(url.pathname)) {
    return 'must not contain dot segments, empty segments, encoded dots, slashes or control characters, or @';
  }
  return null;
}

/**
 * Whether `requested` is acceptable for a client registered with `registered` (see the module
 * documentation for the rule). Pure and synchronous: it is on every authorization request.
 */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (requested.length > MAX_REDIRECT_URI_LENGTH || !requested.startsWith(registered)) return false;
  if (requested.length === registered.length) return true;
  const continuation = requested.slice(registered.length);
  const atBoundary = registered.endsWith('/') || continuation.startsWith('/') || continuation.startsWith('?');
  if (!atBoundary) return false;
  if (!PRINTABLE_ASCII.test(continuation) || continuation.includes('#')) return false;
  const queryStart = continuation.indexOf('?');
  const pathContinuation = queryStart === -1 ? continuation : continuation.slice(0, queryStart);
  if (FORBIDDEN_IN_PATH.test(pathContinuation) || hasDotSegment(pathContinuation)) return false;
  let url: URL;
  try {
    url = new URL(requested);
  } catch {
    return false;
  }
  // Canonical form rules out dot segments in every spelling and any other rewriting the parser
  // would do; the origin check is a second line of defence should the prefix ever be a bare host.
  return (
    url.href === requested &&
    url.origin === new URL(registered).origin &&
    !url.username &&
    !url.password &&
    !hasEmptySegment(url.pathname)
  );
}
