import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { spawnPythonServer } from './python-server.js';
import { rawRequest } from './raw-http.js';

const SCRIPT = fileURLToPath(new URL('./steam-like-provider.py', import.meta.url));

/** A 64-bit SteamID as Steam writes it in a claimed id: 17 decimal digits. */
export type SteamId = string;

/** Two SteamIDs for the tests: the attacker's own account and the victim's. */
export const ATTACKER_STEAM_ID: SteamId = '76561197960435530';
export const VICTIM_STEAM_ID: SteamId = '76561198000000001';

/**
 * A running Steam-like provider (test/support/steam-like-provider.py, on python3-openid): the
 * paths, documents and behaviour of `https://steamcommunity.com/openid`, on 127.0.0.1. Check
 * `pythonOpenIdAvailability()` before starting it.
 */
export interface SteamLikeProvider {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** The OP identifier to configure, like `https://steamcommunity.com/openid`. */
  identifier: string;
  /** The OP endpoint, like `https://steamcommunity.com/openid/login`. */
  endpoint: string;
  /** The claimed id of a Steam user, like `https://steamcommunity.com/openid/id/<SteamID>`. */
  claimedId(steamId: SteamId): string;
  /**
   * Who is signed in at the provider (default {@link ATTACKER_STEAM_ID}), whether they approve,
   * and how long check_authentication takes (default 0). Unnamed settings return to defaults.
   * With `offPatternIds` the signed-in user may have an id Steam never issues (16 digits, letters),
   * which the provider signs and discovery confirms: only a claimed-id pattern refuses it.
   */
  configure(settings?: {
    steamId?: SteamId;
    answer?: 'approve' | 'cancel';
    checkAuthenticationDelayMs?: number;
    /** Hostile: `steamId` may be any 1 to 40 letters or digits, and discovery confirms it. */
    offPatternIds?: boolean;
  }): Promise<void>;
  /** Requests received so far, by kind: discovery, checkid_setup, check_authentication, ... */
  stats(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export async function startSteamLikeProvider(): Promise<SteamLikeProvider> {
  const server = await spawnPythonServer(SCRIPT);
  const { url } = server;
  return {
    url,
    identifier: `${url}/openid`,
    endpoint: `${url}/openid/login`,
    claimedId: (steamId) => `${url}/openid/id/${steamId}`,
    async configure(settings = {}) {
      const res = await rawRequest(`${url}/_control`, { method: 'POST', body: JSON.stringify(settings) });
      if (res.status !== 204) throw new Error(`steam-like provider refused the settings: ${res.body}`);
    },
    async stats() {
      return JSON.parse((await rawRequest(`${url}/_stats`)).body) as Record<string, number>;
    },
    close: () => server.close(),
  };
}

/**
 * The browser at the provider, signed in and approving: sends it the request `redirectUrl`
 * carries and resolves the URL the provider redirects back to (the callback, not delivered).
 */
export async function approveAtProvider(redirectUrl: string): Promise<URL> {
  const res = await rawRequest(redirectUrl);
  expect(res.status, res.body).toBe(302);
  return new URL(res.location!);
}
