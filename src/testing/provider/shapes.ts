import { createHash } from 'node:crypto';

/**
 * Which real provider the development provider looks like, so that a host can try a preset
 * (`steam({ baseUrl })`, `launchpad({ baseUrl })`) and its own account mapping locally:
 * - `generic`: OP identifier `/`, endpoint `/endpoint`, claimed ids `/user/<name>`;
 * - `steam`: OP identifier `/openid`, endpoint `/openid/login`, claimed ids
 *   `/openid/id/<SteamID64>` (17 digits, as Steam's; a name of 17 digits is that SteamID64, any other
 *   name always maps to the same made-up one);
 * - `launchpad`: OP identifier `/`, endpoint `/+openid`, claimed ids `/+id/<7 letters or digits>`,
 *   and the signed sreg `nickname` and `fullname` when asked for (Launchpad and Ubuntu One alike).
 */
export type ProviderShape = 'generic' | 'steam' | 'launchpad';

/** The paths of one shape, relative to the provider's base URL. */
export interface Shape {
  title: string;
  /** The OP identifier's path. */
  identifierPath: string;
  endpointPath: string;
  /** The path the claimed identifiers start with; the rest is their id. */
  claimedIdPrefix: string;
  /** The id in the claimed identifier of a user name. */
  idOf(name: string): string;
  /** The user name whose claimed identifier has this id, when it can be told from the id. */
  nameOf(id: string): string | undefined;
  /** Whether `id` (the route's parameter) names a claimed identifier of this shape. */
  isClaimedId(id: string): boolean;
  /** Whether it answers the sreg request with the user's nickname and full name. */
  sreg: boolean;
}

const digest = (name: string) => createHash('sha256').update(name).digest();

export const shapes: Readonly<Record<ProviderShape, Shape>> = {
  generic: {
    title: 'Development OpenID provider',
    identifierPath: '/',
    endpointPath: '/endpoint',
    idOf: (name) => name,
    claimedIdPrefix: '/user/',
    nameOf: (id) => id,
    isClaimedId: (id) => /^[A-Za-z0-9._-]{1,64}$/.test(id) && !/^\.+$/.test(id),
    sreg: false,
  },
  steam: {
    title: 'Steam-like development provider',
    identifierPath: '/openid',
    endpointPath: '/openid/login',
    idOf: steamId64,
    claimedIdPrefix: '/openid/id/',
    nameOf: (id) => id,
    isClaimedId: (id) => /^[0-9]{17}$/.test(id),
    sreg: false,
  },
  launchpad: {
    title: 'Launchpad-like development provider',
    identifierPath: '/',
    endpointPath: '/+openid',
    idOf: launchpadAccountId,
    claimedIdPrefix: '/+id/',
    nameOf: () => undefined,
    isClaimedId: (id) => /^[A-Za-z0-9]{7}$/.test(id),
    sreg: true,
  },
};

/** The path of the claimed identifier of a user name. */
export function claimedIdPath(shape: Shape, name: string): string {
  return `${shape.claimedIdPrefix}${shape.idOf(name)}`;
}

/** A SteamID64 for a user name: the name itself when it is 17 digits, else one made from it. */
export function steamId64(name: string): string {
  if (/^[0-9]{17}$/.test(name)) return name;
  // Individual accounts are 76561197960265728 and up; 10 digits from the name's hash stay in range.
  return `7656119${(digest(name).readBigUInt64BE(0) % 10_000_000_000n).toString().padStart(10, '0')}`;
}

/** A Launchpad-like account id (7 letters or digits) for a user name, always the same. */
export function launchpadAccountId(name: string): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  return [...digest(name).subarray(0, 7)].map((byte) => alphabet[byte % alphabet.length]).join('');
}
