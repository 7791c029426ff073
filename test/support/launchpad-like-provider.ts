import { fileURLToPath } from 'node:url';
import { spawnPythonServer } from './python-server.js';
import { rawRequest } from './raw-http.js';

const SCRIPT = fileURLToPath(new URL('./launchpad-like-provider.py', import.meta.url));

/** A Launchpad account id as it ends a claimed id (`/+id/Ab3dE7q`): 7 letters or digits. */
export type LaunchpadId = string;

/** The account signed in at the fixture by default, and its sreg values. */
export const DEFAULT_LAUNCHPAD_USER = { userId: 'Ab3dE7q', nickname: 'alice', fullname: 'Alice Liddell' };

/** Settings of the fixture's /_control; see DEFAULTS in launchpad-like-provider.py. */
export interface LaunchpadLikeSettings {
  userId?: LaunchpadId;
  /** `null`: the account has none, so it is not sent even when asked for. */
  nickname?: string | null;
  fullname?: string | null;
  answer?: 'approve' | 'cancel';
  /** Hostile: the path before the id in the claimed id, e.g. `/~`. */
  claimedIdPath?: string;
  /** Hostile: the endpoint path the OP Identifier document names, at the same host. */
  identifierEndpointPath?: string;
  /** Hostile: sreg values appended after the signature, outside `openid.signed`. */
  unsignedSreg?: boolean;
}

/**
 * A running Launchpad-like provider (test/support/launchpad-like-provider.py, on python3-openid):
 * the paths, documents and behaviour of `https://login.launchpad.net/` (and of
 * `https://login.ubuntu.com/`, the same service: start a second one for it), on 127.0.0.1. Check
 * `pythonOpenIdAvailability()` before starting it.
 */
export interface LaunchpadLikeProvider {
  /** Base URL, e.g. `http://127.0.0.1:41234`: what `launchpad({ baseUrl })` takes. */
  url: string;
  /** The OP identifier, like `https://login.launchpad.net/`. */
  identifier: string;
  /** The OP endpoint, like `https://login.launchpad.net/+openid`. */
  endpoint: string;
  /** An account's claimed id, like `https://login.launchpad.net/+id/<id>`. */
  claimedId(id: LaunchpadId): string;
  /** Replaces every setting: unnamed ones return to the defaults ({@link DEFAULT_LAUNCHPAD_USER}). */
  configure(settings?: LaunchpadLikeSettings): Promise<void>;
  /** Requests received so far, by kind: discovery, checkid_setup, check_authentication, sreg, ... */
  stats(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export async function startLaunchpadLikeProvider(): Promise<LaunchpadLikeProvider> {
  const server = await spawnPythonServer(SCRIPT);
  const { url } = server;
  return {
    url,
    identifier: `${url}/`,
    endpoint: `${url}/+openid`,
    claimedId: (id) => `${url}/+id/${id}`,
    async configure(settings = {}) {
      const res = await rawRequest(`${url}/_control`, { method: 'POST', body: JSON.stringify(settings) });
      if (res.status !== 204) throw new Error(`launchpad-like provider refused the settings: ${res.body}`);
    },
    async stats() {
      return JSON.parse((await rawRequest(`${url}/_stats`)).body) as Record<string, number>;
    },
    close: () => server.close(),
  };
}
