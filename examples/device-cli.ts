/**
 * A command-line tool that signs its user in with the device flow (RFC 8628), as a bot's setup
 * command, a tool on a server over SSH or a console would: it prints a URL and a short code, the
 * person opens the URL on their phone or laptop, signs in at their OpenID provider and approves;
 * the tool polls until then. It keeps the refresh token in a file readable by its user alone, so
 * the next run signs in without asking (the token rotates at every refresh).
 *
 * Written with openid-client (`npm install openid-client`), as a tool's author would. Register
 * the tool once, as a public device client, on the authorization server:
 *
 *   npx openid-oauth-bridge clients add --name "Realm CLI" --grant device --public --scope realms:read
 *
 * then run it with the server's URL and the client_id printed:
 *
 *   ISSUER=http://localhost:3000 CLIENT_ID=<client_id> npx tsx examples/device-cli.ts
 *
 * API_URL (default `<ISSUER>/v1/realms`) is the API it calls; TOKEN_FILE where it keeps the
 * refresh token (default ~/.config/realm-cli/tokens-<a digest of ISSUER and CLIENT_ID>.json: one
 * per server and client).
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import * as client from 'openid-client';

const issuer = new URL(required('ISSUER'));
const clientId = required('CLIENT_ID');
const apiUrl = new URL(process.env.API_URL ?? `${issuer.href.replace(/\/$/, '')}/v1/realms`);
const session = createHash('sha256').update(`${issuer.href} ${clientId}`).digest('hex').slice(0, 16);
const tokenFile = process.env.TOKEN_FILE ?? join(homedir(), '.config', 'realm-cli', `tokens-${session}.json`);

// The server's metadata (RFC 8414) names its device authorization and token endpoints. A public
// client has no secret: `None()` sends the client_id alone.
const config = await client
  .discovery(issuer, clientId, undefined, client.None(), {
    algorithm: 'oauth2',
    // Plain http only for a server on this machine, as in development.
    ...(issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {}),
  })
  .catch((err: unknown) =>
    fail(
      `Could not read the server's metadata at ${issuer.href} (${(err as Error).message}): ISSUER must be the server's baseUrl exactly, e.g. http://localhost:3000 for the demo.`,
    ),
  );

const tokens = (await refreshed()) ?? (await signIn());
await keep(tokens.refresh_token);
const answer = await client.fetchProtectedResource(config, tokens.access_token, apiUrl, 'GET');
console.log(`API answered ${answer.status}: ${await answer.text()}`);

/** The device flow: show the code, wait for the person's answer. */
async function signIn(): Promise<client.TokenEndpointResponse> {
  const device = await client
    .initiateDeviceAuthorization(config, { scope: 'realms:read' })
    .catch((err: unknown) =>
      fail(
        `The server refused to start a sign-in for ${clientId} (${(err as Error).message}): CLIENT_ID must be a client registered for the device flow (--grant device --public).`,
      ),
    );
  console.log(`To sign in, open ${device.verification_uri} and enter the code ${device.user_code}`);
  console.log(`(or open ${device.verification_uri_complete} and check the code)`);
  try {
    // Waits `interval` seconds between polls and slows down when the server says so.
    const signedIn = await client.pollDeviceAuthorizationGrant(config, device);
    console.log('Signed in.');
    return signedIn;
  } catch (err) {
    if (err instanceof client.ResponseBodyError && err.error === 'access_denied')
      fail('The sign-in was denied.');
    if (err instanceof client.ResponseBodyError && err.error === 'expired_token') {
      fail('The code expired before it was entered: run the command again.');
    }
    throw err;
  }
}

/** The tokens of the refresh token kept from an earlier run, or `undefined` to sign in again. */
async function refreshed(): Promise<client.TokenEndpointResponse | undefined> {
  const kept = await readFile(tokenFile, 'utf8').then(
    (text) => (JSON.parse(text) as { refresh_token?: string }).refresh_token,
    () => undefined,
  );
  if (kept === undefined) return undefined;
  try {
    const tokens = await client.refreshTokenGrant(config, kept);
    console.log('Signed in with the saved session.');
    return tokens;
  } catch (err) {
    // Revoked on the applications page, or used elsewhere: forget it and ask again.
    if (!(err instanceof client.ResponseBodyError && err.error === 'invalid_grant')) throw err;
    await rm(tokenFile, { force: true });
    console.log('The saved session no longer works.');
    return undefined;
  }
}

/** Keeps the (rotated) refresh token for the next run, readable by this user only. */
async function keep(refreshToken: string | undefined): Promise<void> {
  if (refreshToken === undefined) return;
  await mkdir(dirname(tokenFile), { recursive: true, mode: 0o700 });
  await writeFile(tokenFile, JSON.stringify({ refresh_token: refreshToken }), { mode: 0o600 });
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) fail(`Set ${name}: see the comment at the top of examples/device-cli.ts.`);
  return value;
}

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}
