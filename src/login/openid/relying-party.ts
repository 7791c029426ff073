import { randomBytes } from 'node:crypto';
import { FetchRefusedError } from '../../net/bounded-fetch.js';
import { traceOutbound } from '../../observability/channels.js';
import { readCallbackMessage } from './callback-message.js';
import { checkAssertionLocally } from './check-assertion.js';
import { checkAuthentication } from './check-authentication.js';
import { IDENTIFIER_SELECT, OPENID2_NS } from './constants.js';
import { discover, type DiscoveryLimits } from './discover.js';
import { invalidResponse, OpenIdLoginError } from './errors.js';
import { parseLoginState, type LoginState } from './login-state.js';
import {
  LOGIN_STATE_SCOPE,
  parseRelyingPartyOptions,
  type OpenIdProvider,
  type RelyingPartyConfig,
  type RelyingPartyOptions,
} from './options.js';
import {
  accountOf,
  allowsClaimedId,
  allowsEndpoint,
  type ConfiguredProvider,
  type ProviderPreset,
  type SregField,
} from './provider-policy.js';
import { signedSregValues, sregRequestFields } from './sreg.js';
import { signedTeams, teamsRequestFields } from './teams.js';
import { verifyDiscoveredInformation } from './verify-discovered.js';

/** The outcome of a verified login. */
export interface VerifiedIdentity {
  /** Name of the configured provider. */
  provider: string;
  /**
   * The verified claimed identifier, normalised (section 7.2, RFC 3986 section 6: see
   * `normalizeIdentifier`), fragment kept (section 11.5): the key the user is known by.
   */
  identifier: string;
  opEndpoint: string;
  /**
   * The account's stable key at this provider: what the provider's preset `account()` extracts
   * (the SteamID64 for `steam()`, the account id for `launchpad()`), else `identifier`.
   */
  accountKey: string;
  /** A name to show, when the preset derives one (from signed sreg values). */
  displayName?: string;
  /** OpenID Connect claims the preset derives from the verified assertion (`steam_id`, `name`). */
  claims?: Readonly<Record<string, string>>;
  /** The sreg values the provider signed, among those its preset asks for; absent when none. */
  attributes?: Readonly<Partial<Record<SregField, string>>>;
  /**
   * The teams the provider signed the user a member of, among those its preset asks about
   * (Launchpad's teams extension); absent when it asks about none.
   */
  teams?: readonly string[];
}

/**
 * A strict OpenID 2.0 relying party, stateless mode only: no associations, every assertion is
 * confirmed with `check_authentication`. Only allow-listed providers are discovered, every
 * request is bounded, and a callback is fully checked locally before anything is fetched.
 *
 * @example
 * const rp = new RelyingParty({ providers: [{ name: 'Dev', identifier: 'http://127.0.0.1:4000/' }],
 *   returnTo: 'http://127.0.0.1:3000/login/callback', realm: 'http://127.0.0.1:3000/',
 *   nonces: storage.nonces, clock: Date.now });
 * const { redirectUrl, state } = await rp.begin(rp.findProvider('Dev')!);
 * // ... later, on the callback:
 * const identity = await rp.verify(new URL(req.originalUrl, baseUrl), state);
 *
 * @see OpenID Authentication 2.0 sections 7 (discovery), 9 (request) and 11 (verification)
 */
export class RelyingParty {
  readonly #config: RelyingPartyConfig;

  /** @throws {TypeError} if an option is invalid. */
  constructor(options: RelyingPartyOptions) {
    this.#config = parseRelyingPartyOptions(options);
  }

  /**
   * The provider whose identifier or name equals the argument exactly; no normalisation. A copy:
   * a preset's fields come with it.
   */
  findProvider(identifierOrName: string): (OpenIdProvider & Partial<ProviderPreset>) | undefined {
    const found = this.#config.providers.find(
      (p) => p.identifier === identifierOrName || p.name === identifierOrName,
    );
    return found === undefined ? undefined : { ...found };
  }

  /**
   * Discovers the provider and builds a `checkid_setup` request: `identifier_select` for an OP
   * identifier, the discovered claimed and local identifiers otherwise. No association; Simple
   * Registration only for a preset with `sreg` (asked as optional). Only an OP endpoint at the
   * identifier's own origin, and one the preset's `endpoints` allow, is used.
   *
   * @throws {OpenIdLoginError} `unknown_provider` or `provider_unreachable` (also when every
   * discovered endpoint is at another origin or outside the preset's `endpoints`).
   * @see OpenID 2.0 sections 7.3 and 9.1; Simple Registration 1.1 section 3
   */
  async begin(provider: OpenIdProvider): Promise<{ redirectUrl: string; state: LoginState }> {
    const known = this.#config.providers.find(
      (p) => p.name === provider.name && p.identifier === provider.identifier,
    );
    if (known === undefined) throw unknownProvider();
    const identifier = new URL(known.identifier);
    let discovery;
    try {
      // Traced by the provider's configured name only: its identifier may be a user's own URL.
      discovery = await traceOutbound(
        { call: 'openid_discovery', provider: known.name },
        () => discover(identifier, this.#limits(new Set([identifier.origin]))),
        (found) => (found.services.length === 0 ? 'invalid' : undefined),
      );
    } catch (err) {
      if (!(err instanceof FetchRefusedError)) throw err;
      throw new OpenIdLoginError('provider_unreachable', `${known.name} could not be reached.`, {
        cause: err,
      });
    }
    if (discovery.services.length === 0) {
      throw new OpenIdLoginError('provider_unreachable', `${known.name} does not offer OpenID 2.0 login.`);
    }
    // The endpoint is contacted by the server later (check_authentication, and discovery of
    // identifiers at its origin): an allow-listed identifier must not be able to point it at
    // another host, an internal address say. Only endpoints at the identifier's own origin count.
    const atOrigin = discovery.services.filter((s) => new URL(s.endpoint).origin === identifier.origin);
    if (atOrigin.length === 0) {
      throw new OpenIdLoginError(
        'provider_unreachable',
        `${known.name} does not offer OpenID 2.0 login at its own address.`,
      );
    }
    // A preset names the endpoints the provider is known to use: discovery answered by anything
    // else (a changed or compromised document) is not followed.
    const service = atOrigin.find((s) => allowsEndpoint(known, s.endpoint));
    if (service === undefined) {
      throw new OpenIdLoginError(
        'provider_unreachable',
        `${known.name} does not offer OpenID 2.0 login at its known endpoint.`,
      );
    }
    const claimedId = service.kind === 'server' ? IDENTIFIER_SELECT : discovery.claimedId;
    const identity = service.kind === 'server' ? IDENTIFIER_SELECT : (service.localId ?? discovery.claimedId);
    const returnTo = new URL(this.#config.returnTo);
    returnTo.searchParams.set('rp_nonce', randomBytes(18).toString('base64url'));
    const redirect = new URL(service.endpoint);
    const params: [string, string][] = [
      ['openid.ns', OPENID2_NS],
      ['openid.mode', 'checkid_setup'],
      ['openid.claimed_id', claimedId],
      ['openid.identity', identity],
      ['openid.return_to', returnTo.href],
      ['openid.realm', this.#config.realm],
      ...sregRequestFields(known.sreg ?? []),
      ...teamsRequestFields(known.teams ?? []),
    ];
    for (const [key, value] of params) redirect.searchParams.set(key, value);
    return {
      redirectUrl: redirect.href,
      state: {
        id: randomBytes(16).toString('base64url'),
        provider: known.name,
        opEndpoint: service.endpoint,
        returnTo: returnTo.href,
        startedAt: this.#config.clock(),
      },
    };
  }

  /**
   * Verifies an authentication response received as a GET at `callbackUrl` (built from the
   * configured base URL, never from the Host header) against the state saved by `begin`.
   * Local checks first; then the login state is claimed (one callback per login, however many
   * race), the nonce consumed, the signature confirmed by the OP, and the claimed identifier
   * confirmed by discovery. A preset's `endpoints` and `claimedId` are checked with the local
   * checks; of the extension fields only the signed sreg values a preset asks for are read. The
   * account key and display name come from the preset's `account()`.
   *
   * @throws {OpenIdLoginError} for every refusal; any other error is a server fault (for
   * example the nonce store failing).
   * @see OpenID 2.0 section 11
   */
  async verify(callbackUrl: URL, state: LoginState): Promise<VerifiedIdentity> {
    const login = parseLoginState(state);
    if (login === null) {
      throw new OpenIdLoginError('expired', 'The login session is missing or invalid. Please sign in again.');
    }
    const provider = this.#config.providers.find((p) => p.name === login.provider);
    if (provider === undefined) throw unknownProvider();
    // The state's endpoint came from begin(), which checked it; a state begun before the preset
    // was configured (sessions outlive deployments) is checked again.
    if (!allowsEndpoint(provider, login.opEndpoint)) {
      throw invalidResponse('The login response comes from an unexpected provider endpoint.');
    }
    const now = this.#config.clock();
    // A state from the future is tolerated by the nonce skew: instances may share sessions.
    if (
      now - login.startedAt > this.#config.loginMaxAgeMs ||
      login.startedAt > now + this.#config.nonceMaxAgeMs
    ) {
      throw new OpenIdLoginError('expired', 'The login took too long. Please sign in again.');
    }
    const allowedOrigins = new Set([new URL(provider.identifier).origin, new URL(login.opEndpoint).origin]);
    const message = readCallbackMessage(callbackUrl);
    const assertion = checkAssertionLocally(message, callbackUrl, login, {
      now,
      nonceMaxAgeMs: this.#config.nonceMaxAgeMs,
      allowedOrigins,
    });
    // The preset's pattern is matched on the normalised claimed id, the very string discovery
    // must confirm below and the user is known by. Matched here, before the login is claimed or
    // anything fetched: an identifier the provider never issues costs no request, and discovery
    // cannot turn it into an acceptable one (it must come back unchanged).
    if (!allowsClaimedId(provider, assertion.claimedId)) {
      throw invalidResponse('The provider asserted an identifier it does not issue.');
    }
    // A login is processed at most once. Copies of one session (parallel requests with its
    // cookie each load their own) all hold the state, so only an atomic claim in the shared
    // store can tell the first callback from the rest, which are refused before any request.
    // Claimed after the local checks, so a response refused there leaves the login usable. The
    // claim outlives the state's acceptance window (startedAt + loginMaxAgeMs).
    const first = await this.#config.nonces.use(
      LOGIN_STATE_SCOPE,
      login.id,
      login.startedAt + this.#config.loginMaxAgeMs + 1,
    );
    if (!first) {
      throw new OpenIdLoginError('replayed', 'This login response was already used. Please sign in again.');
    }
    // Consumed before the OP is asked, so a replay is refused without any outbound request; a
    // forged response can only burn its own nonce, under the one endpoint of its login state.
    const fresh = await this.#config.nonces.use(
      login.opEndpoint,
      assertion.nonce,
      assertion.nonceTime + this.#config.nonceMaxAgeMs,
    );
    if (!fresh)
      throw new OpenIdLoginError('replayed', 'This login response was already used. Please sign in again.');
    // Stateless mode: check_authentication is the one verification call (no association).
    await traceOutbound({ call: 'openid_verification', provider: provider.name }, () =>
      checkAuthentication(message, login.opEndpoint, this.#limits(allowedOrigins)),
    );
    await traceOutbound({ call: 'openid_discovery', provider: provider.name }, () =>
      verifyDiscoveredInformation(
        assertion.claimedIdForDiscovery,
        assertion.identity,
        login.opEndpoint,
        this.#limits(allowedOrigins),
      ),
    );
    return identityOf(provider, {
      provider: provider.name,
      identifier: assertion.claimedId,
      opEndpoint: login.opEndpoint,
      // Read only now that check_authentication confirmed the signature over openid.signed.
      attributes: signedSregValues(message, provider.sreg ?? []),
      teams: signedTeams(message, provider.teams ?? []),
    });
  }

  #limits(allowedOrigins: ReadonlySet<string>): DiscoveryLimits {
    return {
      timeoutMs: this.#config.timeoutMs,
      maxBytes: this.#config.maxResponseBytes,
      allowUrl: (url) => allowedOrigins.has(url.origin),
    };
  }
}

function identityOf(
  provider: ConfiguredProvider,
  verified: Parameters<typeof accountOf>[1],
): VerifiedIdentity {
  const { key, displayName, claims } = accountOf(provider, verified);
  const { attributes, teams, ...rest } = verified;
  return {
    ...rest,
    ...(teams !== undefined && { teams }),
    accountKey: key,
    ...(displayName !== undefined && { displayName }),
    ...(claims !== undefined && { claims }),
    ...(Object.keys(attributes).length > 0 && { attributes }),
  };
}

function unknownProvider(): OpenIdLoginError {
  return new OpenIdLoginError('unknown_provider', 'This OpenID provider is not accepted here.');
}
