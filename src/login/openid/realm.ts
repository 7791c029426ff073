/**
 * Realm matching (OpenID 2.0 section 9.2): the OP shows the realm to the user and must only send
 * assertions to a `return_to` URL that falls under it.
 */

/**
 * Whether `returnTo` falls under `realm`: same scheme and port, the same host (or a sub-domain of
 * it when the realm host starts with `*.`), and a path equal to or below the realm's path.
 * Malformed URLs and realms with a fragment never match.
 *
 * @example
 * returnToMatchesRealm('http://127.0.0.1:3000/cb?x=1', 'http://127.0.0.1:3000/'); // true
 * @see OpenID 2.0 section 9.2
 */
export function returnToMatchesRealm(returnTo: string, realm: string): boolean {
  const wildcard = /^(https?:\/\/)\*\./i.exec(realm);
  const realmUrl = parseHttpUrl(wildcard ? realm.replace('*.', '') : realm);
  const target = parseHttpUrl(returnTo);
  if (!realmUrl || !target || realmUrl.hash !== '' || realm.includes('#')) return false;
  if (realmUrl.protocol !== target.protocol || realmUrl.port !== target.port) return false;
  const hostMatches =
    target.hostname === realmUrl.hostname ||
    (wildcard !== null && target.hostname.endsWith(`.${realmUrl.hostname}`));
  return hostMatches && pathIsUnder(target.pathname, realmUrl.pathname);
}

function pathIsUnder(path: string, base: string): boolean {
  if (path === base) return true;
  // "/app" covers "/app/x" but not "/application": a sub-directory, not a string prefix.
  const dir = base.endsWith('/') ? base : `${base}/`;
  return path.startsWith(dir);
}

/** An http(s) URL without credentials, or `null`. */
export function parseHttpUrl(value: string): URL | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username !== '' || url.password !== '') return null;
  return url;
}
