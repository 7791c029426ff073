import { IDENTIFIER_SELECT, OPENID2_NS } from '../../src/login/openid/constants.js';
import { startPythonProvider, type PythonProvider } from './python-openid.js';
import { rawRequest } from './raw-http.js';

/**
 * The attacker's own OpenID server from the Steam threads (omniauth-steam #24, social-core #538,
 * goth #595, passport-steam #120): an ordinary OpenID 2.0 provider, python3-openid here, that
 * signs whatever the attacker tells it to assert. Check `pythonOpenIdAvailability()` first.
 */
export interface AttackerProvider {
  url: string;
  /** The attacker's OP endpoint. */
  endpoint: string;
  /** A page on the attacker's host that delegates to `endpoint` with `localId` (section 7.3.3). */
  delegatingPage(name: string, endpoint: string, localId: string): Promise<string>;
  /**
   * Has the attacker's server sign a positive assertion for `returnTo` naming `claimedId` and
   * `identity`; resolves the callback URL it redirects to (not delivered).
   */
  mint(assertion: { returnTo: string; realm: string; claimedId: string; identity: string }): Promise<URL>;
  /** Requests the attacker's server received that did not come from `mint` itself. */
  contacted(): Promise<number>;
  close(): Promise<void>;
}

export async function startAttackerProvider(): Promise<AttackerProvider> {
  const server: PythonProvider = await startPythonProvider();
  let minted = 0;
  return {
    url: server.url,
    endpoint: server.endpoint,
    async delegatingPage(name, endpoint, localId) {
      await server.configure({ userEndpoint: endpoint, userLocalId: localId });
      return server.userUrl(name);
    },
    async mint({ returnTo, realm, claimedId, identity }) {
      await server.configure({ claimedId, identity });
      const request = new URL(server.endpoint);
      for (const [key, value] of Object.entries({
        ns: OPENID2_NS,
        mode: 'checkid_setup',
        claimed_id: IDENTIFIER_SELECT,
        identity: IDENTIFIER_SELECT,
        return_to: returnTo,
        realm,
      }))
        request.searchParams.set(`openid.${key}`, value);
      const res = await rawRequest(request.href);
      if (res.status !== 302) throw new Error(`the attacker's server did not sign: ${res.body}`);
      minted += 1;
      return new URL(res.location!);
    },
    async contacted() {
      const stats = await server.stats();
      const total = Object.values(stats).reduce((a, b) => a + b, 0);
      return total - minted;
    },
    close: () => server.close(),
  };
}
