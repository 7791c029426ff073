/**
 * The redirect URI rule. The spec asks both that a redirect_uri "starts with the registered URL"
 * and that it "must exactly match, including scheme, letter case and trailing slash". One rule
 * satisfies both: the registered URI must be a byte-exact prefix of the requested one, and the
 * requested URI either equals it or continues it at a path or query boundary, on the same scheme,
 * host and port. Anything that could make the continuation mean something else (dot segments,
 * encoded slashes or dots, empty segments, userinfo, backslashes, fragments, whitespace, control
 * characters) is refused, and so is any spelling a common server resolves to a dot segment or a
 * slash though the URL parser keeps it: a path parameter on a dot segment (`..;`, which Tomcat
 * and Jetty resolve), an encoded `;`, double encoding (`%252e`), IIS's `%u002e`, overlong UTF-8
 * (`%c0%ae`) and characters that Unicode normalisation (NFKC) turns into dots or slashes.
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
 * | `https://app.example/cb`    | `https://app.example/cb/..;/admin`   | no: dot segment in Tomcat |
 * | `https://app.example/cb`    | `https://app.example/cb/x;v=1`       | yes: a path parameter |
 * | `https://app.example/cb`    | `HTTPS://app.example/cb`             | no: letter case |
 *
 * @see RFC 6749 section 3.1.2, RFC 9700 section 4.1
 */

/** Longest redirect URI accepted, registered or requested. */
export const MAX_REDIRECT_URI_LENGTH = 2048;

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
/** Also percent-encoded control characters: nothing a path under the registered one needs. */
const FORBIDDEN_IN_PATH = /[#\\@]|%2e|%2f|%5c|%[01][0-9a-f]|%7f/i;

/** A `%` that does not start a percent-encoded octet: IIS reads `%u002e` as a dot. */
const STRAY_PERCENT = /%(?![0-9a-f]{2})/i;
const ENCODED_OCTET = /%[0-9a-f]{2}/i;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Whether a path, or the part of one under a registered URI (starting at a segment boundary), is
 * unsafe: a raw `#`, `\`, `@`, encoded dot, slash, backslash or control character, a stray `%`,
 * or a segment that some server resolves to a dot segment or splits (see {@link unsafeSegment}).
 * Dot segments are checked here rather than trusting the URL parser to have removed them: Node's
 * parser keeps `/./` before a segment that starts with `:`.
 */
function unsafePath(path: string): boolean {
  if (FORBIDDEN_IN_PATH.test(path) || STRAY_PERCENT.test(path)) return true;
  return path.split('/').some(unsafeSegment);
}

/**
 * Whether a server could read this segment as `.` or `..`, as empty while it is not, or as
 * holding a slash: at each level of percent-decoding (proxies and servlet containers that decode
 * twice), after Unicode normalisation (NFKC), and with its path parameters (from the first `;`,
 * which Tomcat and Jetty strip before resolving dot segments) left out. Percent-encoded octets
 * must be UTF-8: overlong forms such as `%c0%ae` are dots to some decoders.
 */
function unsafeSegment(segment: string): boolean {
  for (let level = segment; ;) {
    const text = level.normalize('NFKC');
    if (text.includes('/') || text.includes('\\')) return true;
    const name = text.split(';', 1)[0]!;
    if (name === '.' || name === '..' || (name === '' && text !== '')) return true;
    if (!ENCODED_OCTET.test(level)) return false;
    const decoded = percentDecoded(level);
    if (decoded === null) return true;
    level = decoded;
  }
}

/** `text` with its percent-encoded octets decoded as UTF-8, or `null` if they are not UTF-8. */
function percentDecoded(text: string): string | null {
  // Split on a capturing group: the encoded octets are the odd parts.
  const parts = text.split(/(%[0-9a-f]{2})/i);
  const bytes = parts.map((part, i) =>
    i % 2 === 1 ? Buffer.from([parseInt(part.slice(1), 16)]) : Buffer.from(part),
  );
  try {
    return UTF8.decode(Buffer.concat(bytes));
  } catch {
    return null;
  }
}

/**
 * An empty path segment (`//`): a path `//evil.example` on the client's own origin becomes a
 * protocol-relative URL to another host if the client ever redirects to its own path.
 */
function hasEmptySegment(path: string): boolean {
  return path.includes('//');
}

/**
 * The host names of the loopback interface (`127.0.0.0/8`, `[::1]`, `localhost`): where a
 * redirect URI may use plain http (RFC 8252 7.3, 8.3), the one list the library checks against.
 */
const LOOPBACK_HOSTS = /^(127(\.\d{1,3}){3}|\[::1\]|localhost)$/;

/**
 * A private-use URI scheme (RFC 8252 7.1), as `URL#protocol` spells it: a reverse domain name the
 * app's developer controls (`com.example.app:`), so it has a dot; never one of the schemes a
 * browser or the system handles itself.
 */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+:$/;

/**
 * The loopback IP literal of an http URI and its port (RFC 8252 7.3), or `null`: `localhost` is
 * not one (a name can resolve elsewhere, RFC 8252 8.3).
 */
const LOOPBACK_LITERAL = /^http:\/\/(127(?:\.\d{1,3}){3}|\[::1\])(?::(\d{1,5}))?(?=[/?]|$)/;

/** `uri` without the port of its loopback IP literal, or `null` when it has none. */
function withoutLoopbackPort(uri: string): { host: string; uri: string } | null {
  const match = LOOPBACK_LITERAL.exec(uri);
  if (!match) return null;
  return { host: match[1]!, uri: `http://${match[1]}${uri.slice(match[0].length)}` };
}

/** Whether `hostname` (as `URL#hostname` spells it, IPv6 in brackets) is a loopback host. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.test(hostname);
}

/**
 * Why a URI cannot be registered, or `null` if it can: the rule `registerClient` and the CLI
 * apply. An absolute https URL, or http on a loopback host for native apps (RFC 8252 7.3), in
 * canonical form (as the WHATWG URL parser prints it), without userinfo, query, fragment
 * (RFC 6749 3.1.2) or wildcard.
 */
export function registeredRedirectUriProblem(
  uri: string,
  options: { privateUseScheme?: boolean } = {},
): string | null {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return 'is too long';
  if (!PRINTABLE_ASCII.test(uri)) return 'contains whitespace, control or non-ASCII characters';
  if (uri.includes('*')) return 'must not contain a wildcard: register the exact URI the client redirects to';
  if (uri.includes('#')) return 'must not contain a fragment (RFC 6749 3.1.2)';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    if (!PRIVATE_USE_SCHEME.test(url.protocol)) {
      return 'must use http or https (https, or http on a loopback address; a public native client may use a reverse-domain private-use scheme such as com.example.app:/cb)';
    }
    if (!options.privateUseScheme) {
      return 'uses a private-use scheme: only a public code client (a native app) may register one (RFC 8252 7.1)';
    }
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    return 'must use https; plain http is allowed only on a loopback address such as http://127.0.0.1:8080/cb (RFC 8252 7.3)';
  }
  if (url.username || url.password) return 'must not contain userinfo';
  if (url.search || uri.includes('?')) return 'must not contain a query';
  if (url.href !== uri) return `must be written in canonical form (${url.href})`;
  if (unsafePath(url.pathname) || hasEmptySegment(url.pathname)) {
    return 'must not contain dot segments, empty segments, encoded dots, slashes or control characters, or @';
  }
  return null;
}

/**
 * Whether `requested` is acceptable for a client registered with `registered` (see the module
 * documentation for the rule). With `exact` (the `oauth2.1` profile: OAuth 2.1, RFC
 * 9700 2.1) no path or query may follow the registered URI: the two are compared as strings, byte
 * for byte; `anyLoopbackPort` still lets a native app name its port. Pure and synchronous: it is on
 * every authorization request.
 */
export function redirectUriMatches(
  registered: string,
  requested: string,
  options: { anyLoopbackPort?: boolean; exact?: boolean } = {},
): boolean {
  const exact = options.exact === true;
  if (options.anyLoopbackPort && registered.startsWith('http://')) {
    // RFC 8252 7.3: a native app's loopback redirect may name any port; the rest must match.
    const base = withoutLoopbackPort(registered);
    const asked = base && withoutLoopbackPort(requested);
    if (base && asked && base.host === asked.host) {
      return canonical(requested) && redirectUriMatches(base.uri, asked.uri, { exact });
    }
  }
  if (requested.length > MAX_REDIRECT_URI_LENGTH) return false;
  if (exact) return requested === registered;
  if (!requested.startsWith(registered)) return false;
  if (requested.length === registered.length) return true;
  const continuation = requested.slice(registered.length);
  const atBoundary = registered.endsWith('/') || continuation.startsWith('/') || continuation.startsWith('?');
  if (!atBoundary) return false;
  if (!PRINTABLE_ASCII.test(continuation) || continuation.includes('#')) return false;
  const queryStart = continuation.indexOf('?');
  const pathContinuation = queryStart === -1 ? continuation : continuation.slice(0, queryStart);
  if (unsafePath(pathContinuation)) return false;
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

/** Whether `uri` is written as the URL parser writes it (a valid port, nothing rewritten). */
function canonical(uri: string): boolean {
  try {
    return new URL(uri).href === uri;
  } catch {
    return false;
  }
}

/** An http loopback redirect URI written without a port: its host and the rest. */
const LOOPBACK_WITHOUT_PORT = /^http:\/\/(localhost|127(?:\.\d{1,3}){3}|\[::1\])([/?].*)?$/;
/** An http loopback redirect URI with a port: its host, port and the rest. */
const LOOPBACK_WITH_PORT = /^http:\/\/(localhost|127(?:\.\d{1,3}){3}|\[::1\]):(\d{1,5})([/?].*)?$/;

/**
 * Whether `requested` is one of the redirect URIs a client's metadata document lists (a client
 * the operator did not register): exactly, byte for byte, with one exception for native apps,
 * which listen on a port the system gives them (RFC 8252 7.3): a listed loopback URI written
 * without a port (`http://localhost/callback`, `http://127.0.0.1/cb`, `http://[::1]/cb`) matches
 * the same host on any port, with the same path and query. `localhost` matches `localhost` only,
 * never `127.0.0.1`. No prefix rule: a document's URIs are the client's own word, read anew.
 *
 * | listed                        | requested                          | accepted |
 * |-------------------------------|------------------------------------|----------|
 * | `https://app.example/cb`      | `https://app.example/cb`           | yes      |
 * | `https://app.example/cb`      | `https://app.example/cb/more`      | no       |
 * | `http://localhost/callback`   | `http://localhost:53682/callback`  | yes      |
 * | `http://localhost/callback`   | `http://127.0.0.1:53682/callback`  | no       |
 * | `http://localhost:3000/cb`    | `http://localhost:3001/cb`         | no       |
 * | `http://localhost/callback`   | `https://localhost:53682/callback` | no       |
 *
 * @see draft-ietf-oauth-client-id-metadata-document, RFC 8252 section 7.3
 */
export function listedRedirectUriMatches(listed: readonly string[], requested: string): boolean {
  if (requested.length > MAX_REDIRECT_URI_LENGTH) return false;
  return listed.some((uri) => uri === requested || onAnyLoopbackPort(uri, requested));
}

function onAnyLoopbackPort(listed: string, requested: string): boolean {
  const base = LOOPBACK_WITHOUT_PORT.exec(listed);
  if (!base) return false;
  const asked = LOOPBACK_WITH_PORT.exec(requested);
  return (
    asked !== null &&
    asked[1] === base[1] &&
    (asked[3] ?? '') === (base[2] ?? '') &&
    // A canonical port: in range, no leading zero, not the scheme's default written out.
    canonical(requested)
  );
}
