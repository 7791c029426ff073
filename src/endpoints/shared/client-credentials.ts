import { OAuthError } from '../../errors/oauth-error.js';
import { MAX_PARAM_LENGTH } from '../../http/params.js';

/** Decodes form-urlencoding; most ids and secrets have nothing to decode (no `%`, no `+`). */
function formDecode(value: string): string {
  if (!value.includes('%') && !value.includes('+')) return value;
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

/** RFC 6749 2.3.1: id and secret are form-urlencoded before they are joined with a colon. */
export function parseBasic(header: string | undefined): { id: string; secret: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) throw new OAuthError('invalid_request', 'Malformed Authorization header.');
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw new OAuthError('invalid_request', 'Malformed Authorization header.');
  let id: string;
  let secret: string;
  try {
    id = formDecode(decoded.slice(0, colon));
    secret = formDecode(decoded.slice(colon + 1));
  } catch {
    throw new OAuthError('invalid_request', 'Malformed Authorization header.');
  }
  // The same bound as form parameters: an id becomes a rate-limit key.
  if (id.length > MAX_PARAM_LENGTH || secret.length > MAX_PARAM_LENGTH || /\0/.test(id + secret)) {
    throw new OAuthError('invalid_request', 'Malformed Authorization header.');
  }
  return id && secret ? { id, secret } : undefined;
}
