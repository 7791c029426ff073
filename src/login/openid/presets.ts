import { isLoopbackHost } from '../../rules/redirect-uri.js';
import { parseHttpUrl } from './realm.js';
import type {
  AccountOfLogin,
  ProfileFacts,
  ProfileSource,
  ProviderPreset,
  SregField,
  VerifiedAssertion,
} from './provider-policy.js';

/** Options every preset takes. */
export interface PresetOptions {
  /** Shown on the selection page and stored with each login; default the provider's own name. */
  name?: string;
  /** An https URL or a `data:image/...` URL; default a small built-in one. */
  icon?: string;
  /**
   * **For tests only**: where the provider is, instead of its public address: the URL of
   * `startDevelopmentProvider({ shape: 'steam' })` (or `'launchpad'`) from
   * `openid-oauth-bridge/testing`, which serves the same paths. An origin: https,
   * or http on a loopback host (`127.0.0.1`, `[::1]`, `localhost`).
   */
  baseUrl?: string;
}

/** A small monogram icon as a `data:` URL (the selection page may only show inline images). */
function monogram(letter: string, background: string): string {
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" ` +
    `fill="${background}"/><text x="16" y="22" font-family="sans-serif" font-size="18" ` +
    `font-weight="bold" text-anchor="middle" fill="#fff">${letter}</text></svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

const STEAM_ICON = monogram('S', '#171a21');
const LAUNCHPAD_ICON = monogram('L', '#4f4f4f');
const UBUNTU_ONE_ICON = monogram('U', '#e95420');

/** Options of {@link steam}. */
export interface SteamOptions extends PresetOptions {
  /**
   * Read each user's public Steam profile (persona name, avatar, profile URL) at login through the
   * Steam Web API (`ISteamUser/GetPlayerSummaries`), with your key from
   * https://steamcommunity.com/dev/apikey. Without it a Steam account is only its SteamID64.
   */
  webApi?: SteamWebApiOptions;
}

/** {@link SteamOptions.webApi}. */
export interface SteamWebApiOptions {
  /** The Web API key: keep it out of the code (an environment variable). Never logged or shown. */
  key: string;
  /**
   * Per request, in milliseconds, 100 to 10000: past it the login goes on without the profile.
   * Default `2000`.
   */
  timeoutMs?: number;
  /**
   * How long a profile is reused before a later login reads it again, in seconds, 60 to 604800, so
   * a burst of logins spends one request per account of the key's daily quota. Default `3600`.
   */
  cacheSeconds?: number;
  /**
   * **For tests only**: where the Web API is, instead of `https://api.steampowered.com`: the URL of
   * `startSteamWebApi()` from `openid-oauth-bridge/testing`. https, or http on a loopback host.
   */
  baseUrl?: string;
}

/**
 * Sign in through Steam: `https://steamcommunity.com/openid`, identifier select, the one endpoint
 * `https://steamcommunity.com/openid/login`, claimed ids
 * `https://steamcommunity.com/openid/id/<SteamID64>` (17 digits) and nothing else, no sreg or
 * attribute exchange (Steam sends none). The account key is the SteamID64. With `webApi`, the
 * persona name, avatar and profile URL of a public profile are read from the Steam Web API at
 * login (they are only there); a private profile, or an API that fails or is slow, leaves them out.
 *
 * @example
 * createAuthorizationServer({ ..., providers: [steam({ webApi: { key: process.env.STEAM_API_KEY! } })] });
 * // in tests: steam({ baseUrl: (await startDevelopmentProvider({ shape: 'steam' })).url })
 * @see https://steamcommunity.com/dev ("Sign in through Steam")
 */
export function steam(options: SteamOptions = {}): ProviderPreset {
  const base = baseOf(options.baseUrl, 'https://steamcommunity.com');
  const claimedId = new RegExp(`^${escapeRegExp(base)}/openid/id/([0-9]{17})$`);
  return Object.freeze({
    name: options.name ?? 'Steam',
    identifier: `${base}/openid`,
    endpoints: Object.freeze([`${base}/openid/login`]),
    claimedId,
    icon: options.icon ?? STEAM_ICON,
    account: (verified: VerifiedAssertion): AccountOfLogin => {
      const key = captured(claimedId, verified);
      return { key, claims: { steam_id: key } };
    },
    ...(options.webApi !== undefined && { profile: steamWebApi(options.webApi) }),
  });
}

/** The Steam Web API's `GetPlayerSummaries` as a {@link ProfileSource}. */
function steamWebApi(options: SteamWebApiOptions): ProfileSource {
  const { key, timeoutMs = 2000, cacheSeconds = 3600 } = options;
  if (typeof key !== 'string' || !/^[A-Za-z0-9]{16,64}$/.test(key)) {
    // The key itself is never repeated in a message.
    throw new TypeError(
      'steam({ webApi }): key must be your Steam Web API key (16 to 64 letters and digits)',
    );
  }
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 10_000) {
    throw new TypeError('steam({ webApi }): timeoutMs must be an integer from 100 to 10000');
  }
  if (!Number.isInteger(cacheSeconds) || cacheSeconds < 60 || cacheSeconds > 604_800) {
    throw new TypeError('steam({ webApi }): cacheSeconds must be an integer from 60 to 604800');
  }
  const base = baseOf(options.baseUrl, 'https://api.steampowered.com');
  return Object.freeze({
    name: 'Steam Web API',
    timeoutMs,
    cacheSeconds,
    url(steamId: string): URL {
      const url = new URL(`${base}/ISteamUser/GetPlayerSummaries/v0002/`);
      url.searchParams.set('key', key);
      url.searchParams.set('steamids', steamId);
      return url;
    },
    parse: steamProfile,
  });
}

/**
 * The public profile in a `GetPlayerSummaries` answer: the player of this SteamID64 whose
 * profile is public (`communityvisibilitystate` 3); anything else is private or absent (`null`).
 * Only well-formed values are kept: a name of printable characters, https URLs.
 */
function steamProfile(body: unknown, steamId: string): ProfileFacts | null {
  const players = (body as { response?: { players?: unknown } } | null)?.response?.players;
  if (!Array.isArray(players)) throw new TypeError('not a GetPlayerSummaries answer');
  const player = players.find((p: { steamid?: unknown } | null) => p?.steamid === steamId) as
    Record<string, unknown> | undefined;
  // No such player is the API failing (it answers for every SteamID64), not a private profile.
  if (player === undefined) throw new TypeError('the answer names no such player');
  if (player.communityvisibilitystate !== 3) return null;
  const name = typeof player.personaname === 'string' ? player.personaname.trim() : '';
  const picture = httpsUrl(player.avatarfull) ?? httpsUrl(player.avatarmedium);
  const profileUrl = httpsUrl(player.profileurl);
  return {
    ...(name.length > 0 && name.length <= 200 && !INVISIBLE.test(name) && { name }),
    ...(picture !== undefined && { picture }),
    ...(profileUrl !== undefined && { profileUrl }),
  };
}

/**
 * Control and format characters (a direction override turns "Admin\u202Emaets" into "Adminsteam")
 * and line separators: a persona name with any is not shown.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

/** `value` when it is an https URL of at most 1024 characters, as written. */
function httpsUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 1024) return undefined;
  const url = URL.parse(value);
  return url?.protocol === 'https:' && !url.username && !url.password ? value : undefined;
}

/** Options of {@link launchpad} and {@link ubuntuOne}. */
export interface LaunchpadOptions extends PresetOptions {
  /**
   * The teams you care about, by name without `~` (`['team-a']`): each login asks which of them
   * the user belongs to (the OpenID teams extension; Launchpad answers for indirect memberships
   * too), and the signed answer becomes the user's teams (`groups` in OpenID Connect, the
   * `accounts` hook's `teams`, a client's `allowedTeams`). At most 50.
   */
  teams?: string[];
}

/**
 * Launchpad: `https://login.launchpad.net/`, identifier select, endpoint `.../+openid`, claimed ids
 * `.../+id/<account id>` (7 letters or digits), sreg nickname and fullname asked as optional, and
 * membership of `teams` when given. The account key is the account id; the display name the
 * signed fullname, else the signed nickname.
 *
 * @example
 * providers: [launchpad({ teams: ['ubuntu-core-dev'] }), ubuntuOne()]
 * @see https://help.launchpad.net/OpenID
 */
export function launchpad(options: LaunchpadOptions = {}): ProviderPreset {
  return ubuntuSso(options, 'Launchpad', 'https://login.launchpad.net', LAUNCHPAD_ICON);
}

/**
 * Ubuntu One: `https://login.ubuntu.com/`, the same single sign-on service as {@link launchpad}
 * under another name (one account has the same id at both), with the same checks.
 *
 * @example
 * providers: [ubuntuOne()]
 */
export function ubuntuOne(options: LaunchpadOptions = {}): ProviderPreset {
  return ubuntuSso(options, 'Ubuntu One', 'https://login.ubuntu.com', UBUNTU_ONE_ICON);
}

function ubuntuSso(
  options: LaunchpadOptions,
  name: string,
  publicBase: string,
  icon: string,
): ProviderPreset {
  const base = baseOf(options.baseUrl, publicBase);
  const claimedId = new RegExp(`^${escapeRegExp(base)}/\\+id/([A-Za-z0-9]{7})$`);
  return Object.freeze({
    name: options.name ?? name,
    identifier: `${base}/`,
    endpoints: Object.freeze([`${base}/+openid`]),
    claimedId,
    icon: options.icon ?? icon,
    sreg: Object.freeze(['nickname', 'fullname'] as const),
    ...(options.teams !== undefined && { teams: Object.freeze([...options.teams]) }),
    account: (verified: VerifiedAssertion): AccountOfLogin =>
      withDisplayName({ key: captured(claimedId, verified) }, verified),
  });
}

/** Options of {@link openid}. */
export interface GenericProviderOptions {
  name: string;
  /** The OP identifier (or a claimed identifier) to discover, an http(s) URL. */
  identifier: string;
  /** The OP endpoint(s) discovery may name: exact URLs, or patterns the whole URL must match. */
  endpointPattern?: string | RegExp | readonly (string | RegExp)[];
  /** A pattern the whole normalised claimed identifier must match (anchors implied). */
  claimedIdPattern?: RegExp;
  icon?: string;
  /** Simple Registration fields to ask for; the display name is the signed fullname or nickname. */
  sreg?: readonly SregField[];
}

/**
 * Any other OpenID 2.0 provider, with the checks it is known to pass. The account key is the
 * normalised claimed identifier, as for a plain `{ name, identifier }`.
 *
 * @example
 * openid({ name: 'Example ID', identifier: 'https://id.example.com/',
 *   endpointPattern: 'https://id.example.com/openid/auth',
 *   claimedIdPattern: /https:\/\/id\.example\.com\/user\/[a-z0-9]+/ })
 */
export function openid(options: GenericProviderOptions): ProviderPreset {
  const { endpointPattern, claimedIdPattern, icon, sreg } = options;
  return Object.freeze({
    name: options.name,
    identifier: options.identifier,
    ...(endpointPattern !== undefined && {
      endpoints: Object.freeze(
        typeof endpointPattern === 'string' || endpointPattern instanceof RegExp
          ? [endpointPattern]
          : [...endpointPattern],
      ),
    }),
    ...(claimedIdPattern !== undefined && { claimedId: claimedIdPattern }),
    ...(icon !== undefined && { icon }),
    ...(sreg !== undefined && { sreg: Object.freeze([...sreg]) }),
    account: (verified: VerifiedAssertion): AccountOfLogin =>
      withDisplayName({ key: verified.identifier }, verified),
  });
}

/** The display name and the OpenID Connect profile claims of the signed sreg values. */
function withDisplayName(account: AccountOfLogin, verified: VerifiedAssertion): AccountOfLogin {
  const fullname = verified.attributes.fullname?.trim();
  const nickname = verified.attributes.nickname?.trim();
  const displayName = fullname || nickname;
  const claims = {
    ...(nickname ? { preferred_username: nickname } : {}),
    ...(fullname ? { name: fullname } : {}),
  };
  return {
    ...account,
    ...(displayName ? { displayName } : {}),
    ...(Object.keys(claims).length > 0 ? { claims } : {}),
  };
}

/** The pattern's first group in the verified claimed id; the relying party already matched it. */
function captured(claimedId: RegExp, verified: VerifiedAssertion): string {
  const key = claimedId.exec(verified.identifier)?.[1];
  if (key === undefined) throw new TypeError(`${verified.provider}: claimed id outside the preset's pattern`);
  return key;
}

function baseOf(baseUrl: string | undefined, publicBase: string): string {
  if (baseUrl === undefined) return publicBase;
  const url = parseHttpUrl(baseUrl);
  const loopback = url !== null && isLoopbackHost(url.hostname);
  if (
    url === null ||
    url.pathname !== '/' ||
    url.search !== '' ||
    baseUrl.includes('#') ||
    (url.protocol !== 'https:' && !loopback)
  ) {
    throw new TypeError(
      `preset baseUrl ${JSON.stringify(baseUrl)} must be an origin: https, or http on a loopback host (it is for tests)`,
    );
  }
  return url.origin;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
