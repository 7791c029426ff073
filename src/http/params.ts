import { OAuthError } from '../errors/oauth-error.js';

/** Longest single parameter value accepted (a redirect URI is the longest legitimate one). */
export const MAX_PARAM_LENGTH = 2048;
/** Most parameters accepted in one request. */
export const MAX_PARAM_COUNT = 32;

/** Parameters that occurred exactly once, and the names that occurred more than once. */
export interface ParsedParams {
  values: Map<string, string>;
  repeated: Set<string>;
}

/**
 * The parameter an array or object spelling (`a[]`, `a[b]`) stands for, or `undefined` for a plain
 * name. Other parsers (qs, PHP, Rails) read `a[]=` as `a`; here it counts as a repetition of `a`,
 * so it is refused rather than silently ignored or read as the value.
 */
function bracketBase(name: string): string | undefined {
  const bracket = name.indexOf('[');
  return bracket === -1 ? undefined : name.slice(0, bracket);
}

/**
 * Parses a query string strictly: every parameter must occur at most once (RFC 6749 3.1:
 * "Request and response parameters MUST NOT be included more than once"), and sizes are bounded.
 * Works on the raw string so no query parser can turn `a[b]=` or repeats into objects or arrays;
 * `a[]` or `a[b]` marks `a` as repeated.
 */
export function parseQueryString(raw: string): ParsedParams {
  const values = new Map<string, string>();
  const repeated = new Set<string>();
  const search = new URLSearchParams(raw);
  let count = 0;
  for (const [name, value] of search) {
    if (++count > MAX_PARAM_COUNT)
      throw new OAuthError('invalid_request', 'Too many parameters.', { redirectable: false });
    const base = bracketBase(name);
    if (base !== undefined) {
      values.delete(base);
      repeated.add(base);
    } else if (values.has(name) || repeated.has(name)) {
      values.delete(name);
      repeated.add(name);
    } else {
      values.set(name, withoutNul(name, value, false));
    }
  }
  return { values, repeated };
}

/**
 * `value`, refused with `invalid_request` if it holds a NUL character: no identifier, secret or
 * URI the library takes has one, and PostgreSQL refuses NUL in text (it would answer 500).
 */
function withoutNul(name: string, value: string, redirectable: boolean): string {
  if (!value.includes('\u0000')) return value;
  throw new OAuthError('invalid_request', `The parameter ${safeName(name)} holds a NUL character.`, {
    redirectable,
  });
}

/** The query string of a request URL, without the `?`. */
export function rawQuery(originalUrl: string): string {
  const index = originalUrl.indexOf('?');
  return index === -1 ? '' : originalUrl.slice(index + 1);
}

/**
 * Reads a form body parsed by `express.urlencoded({ extended: false })` strictly: a repeated
 * parameter arrives as an array and is refused, as is array or object syntax (`a[]`, `a[b]`).
 * Value lengths are checked when a value is read ({@link optionalParam}).
 */
export function formParams(body: unknown): Map<string, string> {
  const values = new Map<string, string>();
  if (typeof body !== 'object' || body === null) return values;
  for (const [name, value] of Object.entries(body)) {
    const base = bracketBase(name);
    if (typeof value !== 'string' || base !== undefined) {
      throw new OAuthError('invalid_request', `The parameter ${safeName(base ?? name)} must be given once.`);
    }
    values.set(name, withoutNul(name, value, true));
  }
  return values;
}

/**
 * A parameter's value, or `undefined` when absent. Empty values count as absent (RFC 6749 3.1:
 * "Parameters sent without a value MUST be treated as if they were omitted"). Longer than
 * `maxLength` (by default {@link MAX_PARAM_LENGTH}) is `invalid_request`.
 */
export function optionalParam(
  values: Map<string, string>,
  name: string,
  maxLength = MAX_PARAM_LENGTH,
): string | undefined {
  const value = values.get(name);
  if (value === undefined || value === '') return undefined;
  if (value.length > maxLength) throw new OAuthError('invalid_request', `The parameter ${name} is too long.`);
  return value;
}

/** A required parameter's value; `invalid_request` if missing. */
export function requiredParam(values: Map<string, string>, name: string): string {
  const value = optionalParam(values, name);
  if (value === undefined) throw new OAuthError('invalid_request', `The parameter ${name} is required.`);
  return value;
}

/**
 * A parameter name fit for an error description: short, and within the characters RFC 6749
 * 4.1.2.1 allows in `error_description`.
 */
export function safeName(name: string): string {
  return /^[\w.\-[\]]{1,40}$/.test(name) ? name : '(unnamed)';
}
