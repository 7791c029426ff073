/**
 * Two app instances, each its own process with its own connection pool, on one PostgreSQL
 * database, as behind a load balancer. The test plays the load balancer: every instance calls
 * itself BASE_URL, and the test decides which instance each browser request goes to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStorage, registerClient } from '../../src/index.js';
import { type SqlStorage } from '../../src/storage/index.js';
import { startDevelopmentProvider, type RunningDevelopmentProvider } from '../../src/testing/index.js';
import { dropSchema, postgresAvailability, postgresUrlFor, uniqueSchema } from '../support/databases.js';
import { parseForm, signInAtProvider as signIn } from '../support/flow.js';
import { createRelyingParty, expectLoginError, genuineCallback } from '../support/openid-harness.js';
import { startInstance, type Instance } from '../support/instances.js';
import { ephemeralNonces } from '../../src/login/nonces.js';

const postgres = await postgresAvailability();
const BASE_URL = 'http://127.0.0.1:1'; // The "load balancer": never contacted, only named.
const REDIRECT = 'https://client.example/cb';

/** A browser whose requests the test routes to one instance or the other. */
class Browser {
  private readonly cookies = new Map<string, string>();

  async request(instance: Instance, url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url, BASE_URL);
    expect(target.origin).toBe(BASE_URL);
    const headers = new Headers(init.headers);
    headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const res = await fetch(`${instance.origin}${target.pathname}${target.search}`, {
      ...init,
      headers,
      redirect: 'manual',
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return res;
  }
}

describe.skipIf(!postgres.ok)(
  `two instances on one PostgreSQL database${postgres.ok ? '' : ` (NOT TESTED: ${postgres.reason})`}`,
  () => {
    const schema = uniqueSchema('instances');
    const databaseUrl = postgresUrlFor(schema);
    let op: RunningDevelopmentProvider;
    let storage: SqlStorage;
    let a: Instance;
    let b: Instance;
    let client: { clientId: string; clientSecret: string };

    beforeAll(async () => {
      op = await startDevelopmentProvider();
      storage = await connectStorage(databaseUrl, { migrate: true });
      const issued = await registerClient(storage, {
        applicationName: 'Shared printer',
        redirectUri: REDIRECT,
      });
      client = { clientId: issued.clientId, clientSecret: issued.clientSecret! };
      const config = {
        databaseUrl,
        baseUrl: BASE_URL,
        providers: [{ name: 'Development provider', identifier: op.identifier }],
        sessionSecret: 'one secret shared by every instance, long enough',
      };
      [a, b] = await Promise.all([startInstance(config), startInstance(config)]);
    }, 60_000);

    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await storage?.close();
      await op?.close();
      await dropSchema(schema);
    });

    const authorizeUrl = () =>
      `/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: client.clientId,
        redirect_uri: REDIRECT,
        state: 's1',
      })}`;

    it('runs login, consent, code exchange and the API across both instances', async () => {
      const browser = new Browser();

      // The authorization request and the start of login at A.
      const selection = await browser.request(a, authorizeUrl());
      expect(selection.status).toBe(200);
      const loginHref = /<a href="([^"]+)">/.exec(await selection.text())![1]!.replaceAll('&amp;', '&');
      const toProvider = await browser.request(a, loginHref);
      expect(toProvider.status).toBe(302);

      // The provider sends the browser back; the load balancer picks B, which finishes the login
      // from the session A stored and shows the consent page.
      const callback = await signIn(toProvider.headers.get('location')!, 'alice');
      const loggedIn = await browser.request(b, callback);
      expect(loggedIn.status).toBe(303);
      const consentPage = await browser.request(a, loggedIn.headers.get('location')!);
      expect(consentPage.status).toBe(200);
      const consent = parseForm(await consentPage.text());

      // Consent answered at A, with the CSRF token B issued.
      const decided = await browser.request(a, consent.action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: BASE_URL },
        body: new URLSearchParams({ ...consent.fields, decision: 'allow' }),
      });
      expect([302, 303]).toContain(decided.status);
      const code = new URL(decided.headers.get('location')!).searchParams.get('code')!;
      expect(code).toBeTruthy();

      // The code issued by A is exchanged at B; a second exchange at A is a replay.
      const exchange = (instance: Instance) =>
        fetch(`${instance.origin}/oauth/token`, {
          method: 'POST',
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            redirect_uri: REDIRECT,
            client_id: client.clientId,
            client_secret: client.clientSecret,
          }),
        });
      const tokens = (await (await exchange(b)).json()) as { access_token: string; refresh_token: string };
      expect(tokens.access_token).toBeTruthy();
      const replay = await exchange(a);
      expect(replay.status).toBe(400);
      expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });

      // The replay at A revoked the grant B issued (RFC 6749 4.1.2), for both instances.
      for (const instance of [a, b]) {
        const api = await fetch(`${instance.origin}/v1/realms`, {
          headers: { authorization: `Bearer ${tokens.access_token}` },
        });
        expect(api.status).toBe(401);
      }
    });

    it('remembers at one instance the consent given at the other, and serves its tokens at both', async () => {
      const browser = new Browser();
      const selection = await browser.request(b, authorizeUrl());
      const loginHref = /<a href="([^"]+)">/.exec(await selection.text())![1]!.replaceAll('&amp;', '&');
      const toProvider = await browser.request(b, loginHref);
      const loggedIn = await browser.request(a, await signIn(toProvider.headers.get('location')!, 'bob'));
      expect(loggedIn.status).toBe(303);
      const consentPage = await browser.request(b, loggedIn.headers.get('location')!);
      const consent = parseForm(await consentPage.text());
      const decided = await browser.request(b, consent.action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: BASE_URL },
        body: new URLSearchParams({ ...consent.fields, decision: 'allow' }),
      });
      expect([302, 303]).toContain(decided.status);

      // Logged in (session in PostgreSQL) and trusted (consent in PostgreSQL): A redirects at once.
      const again = await browser.request(a, authorizeUrl());
      expect(again.status).toBe(302);
      const code = new URL(again.headers.get('location')!).searchParams.get('code')!;
      expect(code).toBeTruthy();

      const res = await fetch(`${b.origin}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: client.clientId,
          client_secret: client.clientSecret,
        }),
      });
      expect(res.status).toBe(200);
      const { access_token } = (await res.json()) as { access_token: string };
      for (const instance of [a, b]) {
        const api = await fetch(`${instance.origin}/v1/realms`, {
          headers: { authorization: `Bearer ${access_token}` },
        });
        expect(api.status).toBe(200);
      }
    });

    it('refuses at one instance an OpenID response nonce used at the other', async () => {
      // Two relying parties, each with the nonce store of its own pool on the shared database.
      const other = await connectStorage(databaseUrl);
      try {
        const first = createRelyingParty(op, { nonces: ephemeralNonces(storage.ephemeral, Date.now) });
        const second = createRelyingParty(op, { nonces: ephemeralNonces(other.ephemeral, Date.now) });
        const { callback, state } = await genuineCallback(first);
        await first.verify(callback, state);
        await expectLoginError(second.verify(callback, state), 'replayed');
      } finally {
        await other.close();
      }
    });
  },
);
