import { OPENID2_NS } from './constants.js';
import { field, type OpenIdMessage } from './callback-message.js';
import { invalidResponse, OpenIdLoginError } from './errors.js';
import type { LoginState } from './login-state.js';
import { normalizeIdentifier } from './normalize-identifier.js';
import { parseHttpUrl } from './realm.js';
import { parseResponseNonce } from './response-nonce.js';

/** What the local checks establish about a positive assertion, for the remote ones. */
export interface LocallyCheckedAssertion {
  /**
   * `openid.claimed_id`, normalised ({@link normalizeIdentifier}), fragment kept: section 11.5
   * makes it part of the key.
   */
  claimedId: string;
  /** The normalised claimed identifier without fragment, which discovery must confirm (11.2). */
  claimedIdForDiscovery: URL;
  /** `openid.identity`, normalised. */
  identity: string;
  nonce: string;
  /** Time stamp of the nonce, epoch ms. */
  nonceTime: number;
}

/** What the local checks compare a response with, besides the login state. */
export interface LocalCheckContext {
  now: number;
  nonceMaxAgeMs: number;
  /** Origins a claimed identifier may live at; any other is refused without being fetched. */
  allowedOrigins: ReadonlySet<string>;
}

/** Fields every signature must cover (section 10.1, plus claimed_id/identity when present). */
const MUST_BE_SIGNED = ['op_endpoint', 'return_to', 'response_nonce', 'assoc_handle'];
const MAX_SIGNED_FIELDS = 64;

/**
 * Every check of an authentication response that needs no network, in an order that answers the
 * cheapest, most telling question first. Nothing may be fetched for a response that fails here.
 *
 * @throws {OpenIdLoginError} `cancelled`, `expired` (stale nonce) or `invalid_response`.
 * @see OpenID 2.0 sections 10, 11.1, 11.3 (time part) and 11.4 (signed list)
 */
export function checkAssertionLocally(
  message: OpenIdMessage,
  callbackUrl: URL,
  state: LoginState,
  context: LocalCheckContext,
): LocallyCheckedAssertion {
  if (field(message, 'ns') !== OPENID2_NS) {
    throw invalidResponse('The login response is not an OpenID 2.0 response.');
  }
  const mode = field(message, 'mode');
  if (mode === 'cancel') throw new OpenIdLoginError('cancelled', 'The login was cancelled at the provider.');
  if (mode === 'error') throw invalidResponse('The provider reported an error.');
  if (mode === 'setup_needed') throw invalidResponse('The provider could not complete the login.');
  if (mode !== 'id_res') throw invalidResponse('The login response has an unknown mode.');

  const returnTo = field(message, 'return_to');
  if (returnTo !== state.returnTo || !callbackMatchesReturnTo(callbackUrl, returnTo)) {
    throw invalidResponse('The login response was not meant for this login.');
  }
  // Compared before anything is fetched: a forged op_endpoint must never be contacted.
  if (parseHttpUrl(field(message, 'op_endpoint') ?? '')?.href !== state.opEndpoint) {
    throw invalidResponse('The login response comes from an unexpected provider endpoint.');
  }
  for (const name of ['response_nonce', 'assoc_handle', 'signed', 'sig']) {
    if (!field(message, name)) throw invalidResponse('The login response is incomplete.');
  }
  const claimedId = field(message, 'claimed_id');
  const identityField = field(message, 'identity');
  if (claimedId === undefined || identityField === undefined) {
    throw invalidResponse('The login response does not identify a user.');
  }
  checkSignedList(message, [...MUST_BE_SIGNED, 'claimed_id', 'identity']);

  const nonce = field(message, 'response_nonce')!;
  const nonceTime = parseResponseNonce(nonce);
  if (nonceTime === null) throw invalidResponse('The login response has a malformed nonce.');
  if (Math.abs(context.now - nonceTime) > context.nonceMaxAgeMs) {
    throw new OpenIdLoginError('expired', 'The login response is too old. Please sign in again.');
  }

  // Normalised once, here: the identifier discovery confirms and the one the user is known by are
  // then the same string, however the provider spelled it (HTTP://, /./, %7E). Refuses XRIs
  // ("=name", "xri://...") along with every other non-http(s) identifier.
  const normalizedClaimedId = normalizeIdentifier(claimedId);
  const identity = normalizeIdentifier(identityField);
  if (normalizedClaimedId === null || identity === null) {
    throw invalidResponse('The login response names an unsupported kind of identifier.');
  }
  const claimedUrl = new URL(normalizedClaimedId);
  claimedUrl.hash = '';
  if (!context.allowedOrigins.has(claimedUrl.origin)) {
    throw invalidResponse('The provider asserted an identifier it is not trusted for.');
  }
  return { claimedId: normalizedClaimedId, claimedIdForDiscovery: claimedUrl, identity, nonce, nonceTime };
}

function checkSignedList(message: OpenIdMessage, required: readonly string[]): void {
  const signed = field(message, 'signed')!.split(',');
  if (signed.length > MAX_SIGNED_FIELDS || new Set(signed).size !== signed.length) {
    throw invalidResponse('The login response has a malformed signed-field list.');
  }
  // A signed field that is absent would make the signature base ambiguous.
  if (signed.some((name) => !message.has(`openid.${name}`))) {
    throw invalidResponse('The login response signs a field it does not contain.');
  }
  if (required.some((name) => !signed.includes(name))) {
    throw invalidResponse('The login response leaves a required field unsigned.');
  }
}

/**
 * Section 11.1: scheme, authority and path equal, and every query parameter of `return_to` present
 * in the received URL with the same values.
 */
export function callbackMatchesReturnTo(callbackUrl: URL, returnTo: string): boolean {
  const expected = parseHttpUrl(returnTo);
  if (expected === null) return false;
  if (
    expected.protocol !== callbackUrl.protocol ||
    expected.host !== callbackUrl.host ||
    expected.pathname !== callbackUrl.pathname
  ) {
    return false;
  }
  for (const key of new Set(expected.searchParams.keys())) {
    const want = expected.searchParams.getAll(key);
    const got = callbackUrl.searchParams.getAll(key);
    if (want.length !== got.length || want.some((value, i) => value !== got[i])) return false;
  }
  return true;
}
