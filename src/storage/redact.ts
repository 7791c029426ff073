/** Query parameters of a connection string whose values are secrets, or name a secret. */
const SECRET_PARAMETER = /pass|secret|key|token|cert|credential/i;

/**
 * A database connection string fit for a log line or an error message (CWE-532): the password of
 * its userinfo (RFC 3986 3.2.1) and the values of secret-looking query parameters (`password`,
 * `sslpassword`, `sslkey`, `sslcert`, …, in any case) become `***`, and any fragment is dropped. A
 * string that does not parse as a URL shows only its scheme, since where its password starts is
 * unknown (a `#` or `/` in an unencoded password breaks the parse).
 *
 * @example
 * redactConnectionString('postgres://app:hunter2@db/auth?sslpassword=x'); // 'postgres://app:***@db/auth?sslpassword=***'
 * redactConnectionString('postgres://app:p#ss@db/auth'); // 'postgres://…'
 */
export function redactConnectionString(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  // The host must be what follows the last '@': otherwise the parse split an unencoded password
  // at a '/', '#', '?' or an earlier '@' (`postgres://u:12/ss@host/db` parses with port 12 and
  // the rest as a path; `postgres://u:a@b/c@host/db` with host b), and part of it would show.
  const lastAt = url.lastIndexOf('@');
  if (parsed === undefined || (lastAt !== -1 && !url.slice(lastAt + 1).startsWith(parsed.host))) {
    const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:(\/\/)?/.exec(url)?.[0];
    return scheme === undefined ? '(a connection string that is not a URL)' : `${scheme}…`;
  }
  if (parsed.password !== '') parsed.password = '***';
  parsed.hash = '';
  for (const name of new Set(parsed.searchParams.keys())) {
    if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, '***');
  }
  // URLSearchParams encodes '*' as '%2A'; keep the mark readable.
  return parsed.toString().replaceAll('%2A%2A%2A', '***');
}
