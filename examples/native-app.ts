/**
 * A native app that can open a browser (a desktop app, a game companion, a CLI on the user's own
 * machine) signs its user in as RFC 8252 says: the authorization code grant with PKCE, as a
 * public client (no secret to leak from the binary), redirected back to a listener on the
 * loopback interface at a port the system chooses when the app starts.
 *
 * Written with openid-client (`npm install openid-client`). Register the app once, as a public
 * code client with a loopback redirect URI without a port (any port is then accepted):
 *
 *   npx openid-oauth-bridge clients add --name "Realm Desktop" --public \
 *     --redirect-uri http://127.0.0.1/callback --scope realms:read
 *
 * then run it with the server's URL and the client_id printed:
 *
 *   ISSUER=http://localhost:3000 CLIENT_ID=<client_id> npx tsx examples/native-app.ts
 *
 * It prints the URL to open (a real app opens the system browser: `open`, `xdg-open`, `start`)
 * and waits, for two minutes at most, for the browser to come back. API_URL (default
 * `<ISSUER>/v1/realms`) is the API it calls.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';

const issuer = new URL(required('ISSUER'));
const clientId = required('CLIENT_ID');
const apiUrl = new URL(process.env.API_URL ?? `${issuer.href.replace(/\/$/, '')}/v1/realms`);

const config = await client
  .discovery(issuer, clientId, undefined, client.None(), {
    algorithm: 'oauth2',
    ...(issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {}),
  })
  .catch((err: unknown) => {
    console.error(
      `Could not read the server's metadata at ${issuer.href} (${(err as Error).message}): ISSUER must be the server's baseUrl exactly, e.g. http://localhost:3000 for the demo.`,
    );
    process.exit(1);
  });

// The loopback listener, on 127.0.0.1 (not `localhost`: RFC 8252 8.3), on a free port.
const listener = createServer();
await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
const redirectUri = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;

const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const authorizationUrl = client.buildAuthorizationUrl(config, {
  redirect_uri: redirectUri,
  scope: 'realms:read',
  state,
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
});
console.log(`Open this URL in your browser to sign in:\n${authorizationUrl.href}`);

const callback = await new Promise<URL>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error('no sign-in within two minutes')), 120_000);
  listener.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', redirectUri);
    if (url.pathname !== '/callback') return void res.writeHead(404).end();
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end('You can close this window and return to the app.');
    clearTimeout(timer);
    resolve(url);
  });
}).finally(() => listener.close());

// The state and the code are checked, the verifier proves this app asked for the code. An error
// the server sent back (the person denied, a client not registered as a public code client with
// this redirect URI) is said as it is.
const tokens = await client
  .authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state })
  .catch((err: unknown) => {
    console.error(`The sign-in did not complete: ${(err as Error).message}`);
    process.exit(1);
  });
console.log('Signed in.');
const answer = await client.fetchProtectedResource(config, tokens.access_token, apiUrl, 'GET');
console.log(`API answered ${answer.status}: ${await answer.text()}`);

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`Set ${name}: see the comment at the top of examples/native-app.ts.`);
    process.exit(1);
  }
  return value;
}
