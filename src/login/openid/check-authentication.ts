import { boundedFetch, FetchRefusedError } from '../../net/bounded-fetch.js';
import type { OpenIdMessage } from './callback-message.js';
import { OPENID2_NS } from './constants.js';
import { invalidResponse, OpenIdLoginError } from './errors.js';
import { parseKeyValueForm } from './key-value-form.js';

/** Bounds of the verification request. */
export interface DirectRequestLimits {
  timeoutMs: number;
  maxBytes: number;
}

/**
 * Asks the OP to confirm a positive assertion's signature (stateless mode): POSTs an exact copy
 * of the response's `openid.*` fields, with `openid.mode=check_authentication`, directly to the
 * discovered OP endpoint (never to a URL taken from the response) and without following
 * redirects. Resolves only on `is_valid:true` in an OpenID 2.0 key-value answer.
 *
 * @throws {OpenIdLoginError} `provider_unreachable` or `invalid_response`.
 * @see OpenID 2.0 section 11.4.2
 */
export async function checkAuthentication(
  message: OpenIdMessage,
  opEndpoint: string,
  limits: DirectRequestLimits,
): Promise<void> {
  const body = new URLSearchParams();
  for (const [key, value] of message)
    body.append(key, key === 'openid.mode' ? 'check_authentication' : value);
  let status: number;
  let text: string;
  try {
    ({ status, body: text } = await boundedFetch(new URL(opEndpoint), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body: body.toString(),
      timeoutMs: limits.timeoutMs,
      maxBytes: limits.maxBytes,
      allowUrl: (url) => url.href === opEndpoint,
    }));
  } catch (err) {
    if (!(err instanceof FetchRefusedError)) throw err;
    throw new OpenIdLoginError('provider_unreachable', 'The provider could not confirm the login.', {
      cause: err,
    });
  }
  const answer = parseKeyValueForm(text);
  if (status !== 200 || answer === null || answer.get('ns') !== OPENID2_NS) {
    throw invalidResponse('The provider gave an invalid answer when confirming the login.');
  }
  if (answer.get('is_valid') !== 'true') {
    throw invalidResponse('The provider did not confirm the login response.');
  }
}
