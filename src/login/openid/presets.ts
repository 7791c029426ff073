import { isLoopbackHost } from '../../clients/redirect-uri.js';
import { parseHttpUrl } from './realm.js';
import type { AccountOfLogin, ProviderPreset, SregField, VerifiedAssertion } from './provider-policy.js';

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

/**
 * Sign in through Steam: `https://steamcommunity.com/openid`, identifier select, the one endpoint
 * `https://steamcommunity.com/openid/login`, claimed ids
 * `https://steamcommunity.com/openid/id/<SteamID64>` (17 digits) and nothing else, no sreg or
 * attribute exchange (Steam sends none). The account key is the SteamID64; there is no display
 * name (Steam's persona name is only in its Web API).
 *
 * @example
 * createAuthorizationServer({ ..., providers: [steam()] });
 * // in tests: steam({ baseUrl: (await startDevelopmentProvider({ shape: 'steam' })).url })
 * @see https://steamcommunity.com/dev ("Sign in through Steam")
 */
export function steam(options: PresetOptions = {}): ProviderPreset {
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
  });
}

/**
 * Launchpad: `https://login.launchpad.net/`, identifier select, endpoint `.../+openid`, claimed ids
 * `.../+id/<account id>` (7 letters or digits), sreg nickname and fullname asked as optional. The
 * account key is the account id; the display name the signed fullname, else the signed nickname.
 *
 * @example
 * providers: [launchpad(), ubuntuOne()]
 * @see https://help.launchpad.net/OpenID
 */
export function launchpad(options: PresetOptions = {}): ProviderPreset {
  return ubuntuSso(options, 'Launchpad', 'https://login.launchpad.net', LAUNCHPAD_ICON);
}

/**
 * Ubuntu One: `https://login.ubuntu.com/`, the same single sign-on service as {@link launchpad}
 * under another name (one account has the same id at both), with the same checks.
 *
 * @example
 * providers: [ubuntuOne()]
 */
export function ubuntuOne(options: PresetOptions = {}): ProviderPreset {
  return ubuntuSso(options, 'Ubuntu One', 'https://login.ubuntu.com', UBUNTU_ONE_ICON);
}

function ubuntuSso(options: PresetOptions, name: string, publicBase: string, icon: string): ProviderPreset {
  const base = baseOf(options.baseUrl, publicBase);
  const claimedId = new RegExp(`^${escapeRegExp(base)}/\\+id/([A-Za-z0-9]{7})$`);
  return Object.freeze({
    name: options.name ?? name,
    identifier: `${base}/`,
    endpoints: Object.freeze([`${base}/+openid`]),
    claimedId,
    icon: options.icon ?? icon,
    sreg: Object.freeze(['nickname', 'fullname'] as const),
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
