import { FetchRefusedError } from '../../net/bounded-fetch.js';
import { discover, type DiscoveryLimits } from './discover.js';
import { invalidResponse, OpenIdLoginError } from './errors.js';
import { normalizeIdentifier } from './normalize-identifier.js';

/**
 * Confirms by discovery that the OP is authorised to assert the claimed identifier: the claimed
 * identifier (without fragment) must resolve, without being redirected to another URL, to a
 * Claimed Identifier Element naming the same OP endpoint and an OP-Local Identifier equal to
 * `openid.identity`. The caller has already checked the identifier's origin is allowed, and
 * passes both identifiers normalised ({@link normalizeIdentifier}); the discovered ones are
 * normalised the same way before they are compared, so that the identifier a user is known by is
 * exactly the one discovery confirmed.
 *
 * @throws {OpenIdLoginError} `provider_unreachable` or `invalid_response`.
 * @see OpenID 2.0 section 11.2
 */
export async function verifyDiscoveredInformation(
  claimedId: URL,
  identity: string,
  opEndpoint: string,
  limits: DiscoveryLimits,
): Promise<void> {
  let discovered;
  try {
    discovered = await discover(claimedId, limits);
  } catch (err) {
    if (!(err instanceof FetchRefusedError)) throw err;
    if (err.reason === 'timeout' || err.reason === 'network') {
      throw new OpenIdLoginError('provider_unreachable', 'The identifier could not be checked.', {
        cause: err,
      });
    }
    throw invalidResponse('The asserted identifier could not be verified.', err);
  }
  if (normalizeIdentifier(discovered.claimedId) !== claimedId.href) {
    throw invalidResponse('The asserted identifier redirects elsewhere.');
  }
  const confirmed = discovered.services.some(
    (s) =>
      s.kind === 'signon' &&
      s.endpoint === opEndpoint &&
      normalizeIdentifier(s.localId ?? discovered.claimedId) === identity,
  );
  if (!confirmed) {
    throw invalidResponse('The provider is not authorised to assert this identifier.');
  }
}
