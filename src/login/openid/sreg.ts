import { field, signedExtension, type OpenIdMessage } from './callback-message.js';
import type { SregField } from './provider-policy.js';

/** Namespace of Simple Registration 1.1 in an OpenID 2.0 message (SREG 1.1 section 5). */
export const SREG_NS = 'http://openid.net/extensions/sreg/1.1';
/** Simple Registration 1.0's type URI, which some providers use as the namespace (SREG 1.1 section 6). */
const SREG_1_0_NS = 'http://openid.net/sreg/1.0';

// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
const MAX_VALUE_LENGTH = 1024;

/**
 * The request fields asking for `fields` as optional: the user's provider may send them or not.
 *
 * @see Simple Registration 1.1 section 3
 */
export function sregRequestFields(fields: readonly SregField[]): [string, string][] {
  if (fields.length === 0) return [];
  return [
    ['openid.ns.sreg', SREG_NS],
    ['openid.sreg.optional', fields.join(',')],
  ];
}

/**
 * The values of `wanted` in a positive assertion that the provider signed: the namespace
 * declaration (`openid.ns.<alias>`, whatever the alias) and each value must be in `openid.signed`.
 * Anything else is dropped, never an error: an unsigned value could have been added by anyone on
 * the way. So are values over 1 KiB or with control characters, and everything when two signed
 * aliases declare the namespace. Call only for an assertion whose signature was confirmed.
 *
 * @see Simple Registration 1.1 section 4; OpenID 2.0 sections 10.1 and 12
 */
export function signedSregValues(
  message: OpenIdMessage,
  wanted: readonly SregField[],
): Partial<Record<SregField, string>> {
  if (wanted.length === 0) return {};
  const extension = signedExtension(message, [SREG_NS, SREG_1_0_NS]);
  if (extension === undefined) return {};
  const { alias, signed } = extension;
  const values: Partial<Record<SregField, string>> = {};
  for (const name of wanted) {
    const value = field(message, `${alias}.${name}`);
    if (
      value !== undefined &&
      signed.has(`${alias}.${name}`) &&
      value.length <= MAX_VALUE_LENGTH &&
      !CONTROL_CHARACTER.test(value)
    ) {
      values[name] = value;
    }
  }
  return values;
}
