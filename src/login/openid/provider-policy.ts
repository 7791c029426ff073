import { RESERVED_CLAIMS } from '../../oidc/reserved-claims.js';

/** An OpenID provider the operator allows, by its OP identifier (or a claimed identifier). */
export interface OpenIdProvider {
  /** Shown to users and stored with each user; unique among providers. */
  name: string;
  /** An http(s) URL; discovery is only ever performed on these and on identifiers they assert. */
  identifier: string;
}

/** Simple Registration fields a provider may be asked for (SREG 1.1 section 4). */
export type SregField = 'nickname' | 'fullname' | 'email';

/** The sreg fields the relying party knows how to ask for, in request order. */
export const SREG_FIELDS: readonly SregField[] = ['nickname', 'fullname', 'email'];

/**
 * What a verified login established, handed to {@link ProviderPreset.account}: everything in it was
 * signed by the provider and confirmed by `check_authentication` and discovery.
 */
export interface VerifiedAssertion {
  /** Name of the configured provider. */
  provider: string;
  /** The verified claimed identifier, normalised (`normalizeIdentifier`), fragment kept. */
  identifier: string;
  /** The OP endpoint that signed the assertion. */
  opEndpoint: string;
  /** The sreg values the provider signed, among those the provider's preset asks for. */
  attributes: Readonly<Partial<Record<SregField, string>>>;
  /**
   * The teams the provider signed the user a member of, among those the preset asks about;
   * `undefined` when it asks about none.
   */
  teams?: readonly string[] | undefined;
}

/** The account a verified login belongs to, in the provider's own terms. */
export interface AccountOfLogin {
  /**
   * Stable key of the account at this provider (a SteamID64, a Launchpad account id): unique per
   * provider, never reassigned. At most 512 characters, no control characters.
   */
  key: string;
  /** A name to show for the account, if the provider gave one (dropped when empty or over 200 characters). */
  displayName?: string;
  /**
   * Facts of the account as OpenID Connect claims, from the verified assertion only (the
   * SteamID64 as `steam_id`, signed sreg values as `preferred_username` and `name`).
   */
  claims?: Readonly<Record<string, string>>;
}

/**
 * An {@link OpenIdProvider} with the facts a relying party checks a login against: data plus one
 * function, no code path of its own. Made by `steam()`, `launchpad()`, `ubuntuOne()` or `openid()`;
 * every field but `account` may be left out, and an absent one adds no check.
 *
 * @example
 * const steamLogin: ProviderPreset = steam();
 * // { name: 'Steam', identifier: 'https://steamcommunity.com/openid',
 * //   endpoints: ['https://steamcommunity.com/openid/login'],
 * //   claimedId: /^https:\/\/steamcommunity\.com\/openid\/id\/([0-9]{17})$/, icon: 'data:...',
 * //   account: (v) => ({ key: <the SteamID64> }) }
 */
export interface ProviderPreset extends OpenIdProvider {
  /**
   * The OP endpoints discovery may name: an exact URL, or a pattern the whole URL must match. A
   * discovered endpoint matching none is refused (the endpoint must also be at the identifier's
   * own origin, as for every provider).
   */
  endpoints?: readonly (string | RegExp)[];
  /**
   * The claimed identifiers this provider may assert: a pattern the whole normalised claimed
   * identifier must match (anchors are implied). Any other is refused.
   */
  claimedId?: RegExp;
  /** Shown on the selection page: an https URL or a `data:image/...` URL. */
  icon?: string;
  /** Simple Registration fields to ask for; only values the provider signs are kept. */
  sreg?: readonly SregField[];
  /**
   * Launchpad teams to ask about (the OpenID teams extension, without `~`); the user's membership
   * of each counts only when the provider signs it.
   */
  teams?: readonly string[];
  /** The account key and display name of a verified login. */
  account(verified: VerifiedAssertion): AccountOfLogin;
  /**
   * Where the account's public profile is read after each login (Steam's Web API, with the
   * host's key): fetched by the library within bounds, cached, never blocking the login.
   */
  profile?: ProfileSource;
}

/**
 * A profile a preset reads after the login ({@link ProviderPreset.profile}). The library fetches
 * `url(accountKey)` with the hardened fetcher (no redirect, `timeoutMs`, 64 KiB at most), reads
 * the JSON answer with `parse`, and caches the outcome for `cacheSeconds` in the ephemeral store
 * (a failure for a minute), so a burst of logins costs one request per account. The URL may carry
 * an API key: it is never logged, shown or put in an event.
 */
export interface ProfileSource {
  /** What the events and the log call this source, e.g. `Steam Web API`. */
  name: string;
  url(accountKey: string): URL;
  /** The account's public profile in the answer, or `null` when it is private or absent. */
  parse(body: unknown, accountKey: string): ProfileFacts | null;
  timeoutMs: number;
  cacheSeconds: number;
}

/** An account's public profile: what a person recognises it by. */
export interface ProfileFacts {
  /** The name the person shows (Steam's persona name). */
  name?: string;
  /** An https URL of the avatar. */
  picture?: string;
  /** An https URL of the public profile page. */
  profileUrl?: string;
}

/** A configured provider as the relying party keeps it: a plain one or a preset. */
export type ConfiguredProvider = OpenIdProvider & Partial<ProviderPreset>;

/** `pattern` matched against the whole of `value` (a string pattern is an exact URL). */
function matchesWhole(pattern: string | RegExp, value: string): boolean {
  if (typeof pattern === 'string') return pattern === value;
  // A fresh expression: anchors the caller's pattern and never shares its lastIndex.
  return new RegExp(`^(?:${pattern.source})$`, pattern.flags.replace(/[gy]/g, '')).test(value);
}

/** Whether the provider's preset allows `endpoint` (a provider without `endpoints` allows any). */
export function allowsEndpoint(provider: ConfiguredProvider, endpoint: string): boolean {
  return provider.endpoints === undefined || provider.endpoints.some((p) => matchesWhole(p, endpoint));
}

/** Whether the provider's preset allows the normalised claimed identifier `claimedId`. */
export function allowsClaimedId(provider: ConfiguredProvider, claimedId: string): boolean {
  return provider.claimedId === undefined || matchesWhole(provider.claimedId, claimedId);
}

// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
const MAX_KEY_LENGTH = 512;
const MAX_DISPLAY_NAME_LENGTH = 200;

/**
 * The account of a verified login: the preset's `account()`, or, for a plain provider, the
 * normalised claimed identifier as key and no display name.
 *
 * @throws {TypeError} when a preset's `account()` gives no usable key: a configuration fault,
 * not the user's.
 */
export function accountOf(provider: ConfiguredProvider, verified: VerifiedAssertion): AccountOfLogin {
  if (provider.account === undefined) return { key: verified.identifier };
  const account = provider.account(verified);
  const key: unknown = account?.key;
  if (
    typeof key !== 'string' ||
    key.length === 0 ||
    key.length > MAX_KEY_LENGTH ||
    CONTROL_CHARACTER.test(key)
  ) {
    throw new TypeError(
      `provider ${provider.name}: account() must return a key of 1 to 512 printable characters`,
    );
  }
  const displayName = typeof account.displayName === 'string' ? account.displayName.trim() : '';
  const claims = claimsOf(account.claims);
  return {
    key,
    ...(displayName.length > 0 &&
      displayName.length <= MAX_DISPLAY_NAME_LENGTH &&
      !CONTROL_CHARACTER.test(displayName) && { displayName }),
    ...(claims && { claims }),
  };
}

/**
 * The claims of an account, kept only as strings of printable characters (at most 20 of them,
 * names up to 64 characters, values up to 1024); a reserved name is dropped.
 */
function claimsOf(value: unknown): Record<string, string> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const kept = Object.entries(value)
    .filter(
      ([name, claim]) =>
        /^[a-z][a-z0-9_]{0,63}$/.test(name) &&
        !RESERVED_CLAIMS.has(name) &&
        typeof claim === 'string' &&
        claim.length > 0 &&
        claim.length <= 1024 &&
        !CONTROL_CHARACTER.test(claim),
    )
    .slice(0, 20);
  return kept.length > 0 ? (Object.fromEntries(kept) as Record<string, string>) : undefined;
}
