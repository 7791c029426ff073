/**
 * The device flow as a CLI tool written with openid-client 6, unmodified, runs it:
 * `initiateDeviceAuthorization`, then `pollDeviceAuthorizationGrant` (which waits the interval
 * between polls and honours `slow_down`) while a person approves in the test's browser. Through
 * the plain development provider and its Steam shape, with and without OpenID Connect.
 */
import * as client from 'openid-client';
import { afterEach, describe, expect, it } from 'vitest';
import { registerClient, steam } from '../../src/index.js';
import { startDevelopmentProvider } from '../../src/testing/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { answerDevice, registerDeviceClient } from '../support/device.js';

const KEY_SECRET = 'an-oidc-key-secret-of-at-least-32-chars';

let t: TestApp | undefined;
let op: Awaited<ReturnType<typeof startDevelopmentProvider>> | undefined;
afterEach(async () => {
  await t?.close();
  await op?.close();
  t = op = undefined;
});

/** Runs the flow: the device starts and polls, the person approves as `user`; resolves the tokens. */
async function deviceSignIn(app: TestApp, config: client.Configuration, scope: string, user: string) {
  const started = await client.initiateDeviceAuthorization(config, { scope });
  expect(started.verification_uri).toBe(`${app.baseUrl}/oauth/device`);
  const polling = client.pollDeviceAuthorizationGrant(config, started);
  const { done } = await answerDevice(app, started.user_code, 'allow', user);
  expect(done.text).toContain('Device connected');
  return polling;
}

async function realmsOf(app: TestApp, accessToken: string) {
  const res = await fetch(`${app.baseUrl}/v1/realms`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { realms: string[] }).realms;
}

describe('openid-client 6 device flow', () => {
  it('a public CLI client gets tokens after the person approves, and refreshes', async () => {
    t = await createTestApp({ device: { interval: 1 }, scopes: { realms: 'See your realms' } });
    await registerDeviceClient(t.storage);
    const config = await client.discovery(new URL(t.baseUrl), 'realm-cli', undefined, client.None(), {
      algorithm: 'oauth2',
      execute: [client.allowInsecureRequests],
    });
    expect(config.serverMetadata().device_authorization_endpoint).toBe(
      `${t.baseUrl}/oauth/device_authorization`,
    );
    const tokens = await deviceSignIn(t, config, 'realms', 'alice');
    expect(await realmsOf(t, tokens.access_token)).toHaveLength(1);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(await realmsOf(t, refreshed.access_token)).toHaveLength(1);
  });

  it('a confidential device client authenticates with its secret', async () => {
    t = await createTestApp({ device: { interval: 1 } });
    const issued = await registerClient(t.storage, {
      applicationName: 'Realm TV',
      grantType: 'device_code',
      scopes: ['realms'],
    });
    const config = await client.discovery(
      new URL(t.baseUrl),
      issued.clientId,
      undefined,
      client.ClientSecretBasic(issued.clientSecret!),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
    );
    const tokens = await deviceSignIn(t, config, 'realms', 'bob');
    expect(await realmsOf(t, tokens.access_token)).toEqual(expect.any(Array));
  });

  it('with OpenID Connect, through the Steam-shaped provider: an ID token with the SteamID', async () => {
    op = await startDevelopmentProvider({ shape: 'steam' });
    t = await createTestApp({
      device: { interval: 1 },
      oidc: { keySecret: KEY_SECRET },
      providers: [steam({ baseUrl: op.url })],
    });
    await registerClient(t.storage, {
      clientId: 'steam-bot',
      applicationName: 'Guild Bot',
      grantType: 'device_code',
      public: true,
      scopes: ['openid', 'profile', 'realms'],
    });
    const config = await client.discovery(new URL(t.baseUrl), 'steam-bot', undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    });
    expect(config.serverMetadata().grant_types_supported).toContain(
      'urn:ietf:params:oauth:grant-type:device_code',
    );
    const tokens = await deviceSignIn(t, config, 'openid profile realms', '76561198000000042');
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: t.baseUrl, aud: 'steam-bot', steam_id: '76561198000000042' });
    const [realm] = await realmsOf(t, tokens.access_token);
    expect(realm).toBe(`realm-of-${claims.sub}`);
  });
});
