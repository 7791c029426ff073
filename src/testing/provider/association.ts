import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { encodeKeyValueForm } from '../../login/openid/key-value-form.js';

/** A private association (OpenID 2.0 section 11.4.2): its key never leaves the provider. */
export interface PrivateAssociation {
  readonly handle: string;
  /** Signs the listed fields (names without `openid.`) of a message keyed by full names. */
  sign(message: ReadonlyMap<string, string>, signed: readonly string[]): string;
  /** Whether `sig` is the signature of the listed fields; false if a listed field is absent. */
  verify(message: ReadonlyMap<string, string>, signed: readonly string[], sig: string): boolean;
}

/**
 * Creates the provider instance's private HMAC-SHA256 association, with a fresh random key.
 *
 * @see OpenID 2.0 sections 6 (signature generation) and 11.4.2 (private associations)
 */
export function createPrivateAssociation(): PrivateAssociation {
  const key = randomBytes(32);
  const handle = `dev-private-${randomBytes(9).toString('base64url')}`;
  const mac = (message: ReadonlyMap<string, string>, signed: readonly string[]): Buffer | null => {
    const fields: [string, string][] = [];
    for (const name of signed) {
      const value = message.get(`openid.${name}`);
      if (value === undefined) return null;
      fields.push([name, value]);
    }
    try {
      return createHmac('sha256', key).update(encodeKeyValueForm(fields), 'utf8').digest();
    } catch {
      return null; // a newline in a field: not encodable, so never validly signed
    }
  };
  return {
    handle,
    sign(message, signed) {
      const digest = mac(message, signed);
      if (digest === null) throw new TypeError('Cannot sign a message with a missing or unencodable field.');
      return digest.toString('base64');
    },
    verify(message, signed, sig) {
      const expected = mac(message, signed);
      const given = Buffer.from(sig, 'base64');
      return expected !== null && given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
