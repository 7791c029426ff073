import { invalidResponse } from './errors.js';

/** Bounds on a callback URL; a real positive assertion is a few kilobytes with ~12 fields. */
const MAX_URL_LENGTH = 16 * 1024;
const MAX_PARAMETERS = 256;
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** The `openid.*` fields of an indirect message, keyed by their full name (`openid.mode`). */
export type OpenIdMessage = ReadonlyMap<string, string>;

/**
 * Reads the `openid.*` query parameters of a callback URL. A repeated `openid.*` parameter is
 * refused: which copy the signature covers would be ambiguous, the attack the `openid` npm
 * package allows; so is an `openid.*` name with a control character. Non-`openid.*` parameters
 * (such as the RP's own `rp_nonce`) stay in the URL for the `return_to` check.
 *
 * @throws {OpenIdLoginError} `invalid_response` when the URL is oversized, has a duplicate or a
 * field name with a control character.
 * @see OpenID 2.0 sections 4.1.2 and 5.2
 */
export function readCallbackMessage(callbackUrl: URL): OpenIdMessage {
  if (callbackUrl.href.length > MAX_URL_LENGTH) {
    throw invalidResponse('The login response is too large.');
  }
  const message = new Map<string, string>();
  let count = 0;
  for (const [key, value] of callbackUrl.searchParams) {
    count += 1;
    if (count > MAX_PARAMETERS) throw invalidResponse('The login response has too many fields.');
    if (!key.startsWith('openid.')) continue;
    // No OpenID field name has a control character. One that does ("openid.claimed_id\0") reads
    // as another field to whichever parser strips it, the attack on passport-steam (#127).
    if (CONTROL_CHARACTER.test(key)) throw invalidResponse('The login response has a malformed field name.');
    if (message.has(key)) throw invalidResponse('The login response repeats a field.');
    message.set(key, value);
  }
  return message;
}

/** The value of `openid.<name>`, or `undefined`. */
export function field(message: OpenIdMessage, name: string): string | undefined {
  return message.get(`openid.${name}`);
}

/**
 * The alias of an extension in a positive assertion, when the provider signed its declaration
 * (`openid.ns.<alias>` in `openid.signed`) under exactly one alias for one of `namespaces`; else
 * `undefined`: an extension declared twice, or unsigned, is read as absent. With the set of
 * signed field names, to check each of the extension's values against.
 *
 * @see OpenID 2.0 sections 10.1 and 12
 */
export function signedExtension(
  message: OpenIdMessage,
  namespaces: readonly string[],
): { alias: string; signed: ReadonlySet<string> } | undefined {
  const signed = new Set((field(message, 'signed') ?? '').split(','));
  const aliases: string[] = [];
  for (const [key, value] of message) {
    if (!key.startsWith('openid.ns.') || !namespaces.includes(value)) continue;
    if (signed.has(key.slice('openid.'.length))) aliases.push(key.slice('openid.ns.'.length));
  }
  return aliases.length === 1 ? { alias: aliases[0]!, signed } : undefined;
}
