/**
 * Key-Value Form Encoding (OpenID 2.0 section 4.1.1), the body format of direct responses:
 * `key:value\n` lines, UTF-8.
 */

/**
 * Parses a key-value form body. Refuses a missing final newline, a line without a colon and a
 * repeated key, rather than guessing: the body answers a security question (`is_valid`).
 *
 * @returns the fields, or `null` if the body is not well-formed.
 * @see OpenID 2.0 section 4.1.1
 */
export function parseKeyValueForm(body: string): Map<string, string> | null {
  if (body !== '' && !body.endsWith('\n')) return null;
  const fields = new Map<string, string>();
  for (const line of body.split('\n').slice(0, -1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) return null;
    const key = line.slice(0, colon);
    if (fields.has(key)) return null;
    fields.set(key, line.slice(colon + 1));
  }
  return fields;
}

/**
 * Encodes fields as a key-value form, in the order given. This is also the exact byte string an
 * OpenID signature covers (section 6.1).
 *
 * @throws {TypeError} if a key contains `:` or a newline, or a value contains a newline: the
 * encoding cannot represent them, and a signature over an ambiguous string would be unsafe.
 * @see OpenID 2.0 sections 4.1.1 and 6.1
 */
export function encodeKeyValueForm(fields: Iterable<readonly [string, string]>): string {
  let out = '';
  for (const [key, value] of fields) {
    if (key.includes(':') || key.includes('\n') || value.includes('\n')) {
      throw new TypeError('A key-value form field cannot contain a newline, nor a key a colon.');
    }
    out += `${key}:${value}\n`;
  }
  return out;
}
