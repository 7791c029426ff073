/**
 * examples/device-cli.ts and examples/native-app.ts run as their comments say, against a real
 * app with the library mounted: the device flow's CLI prints a code that a person (the test's
 * browser) approves, keeps its refresh token for the next run, and notices a revoked one; the
 * native app's loopback listener receives the browser's redirect with the code.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApplication } from '../../src/endpoints/applications/list.js';
import { registerClient } from '../../src/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { answerDevice, registerDeviceClient } from '../support/device.js';
import { answerConsent, authorizeWithLogin } from '../support/flow.js';
import { runExample } from './run-example.js';

let t: TestApp;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'oob-device-cli-'));
  t = await createTestApp({ device: { interval: 1 }, scopes: { 'realms:read': 'See your realms' } });
  await registerDeviceClient(t.storage, ['realms:read']);
  await registerClient(t.storage, {
    clientId: 'realm-desktop',
    applicationName: 'Realm Desktop',
    redirectUri: 'http://127.0.0.1/callback',
    public: true,
    scopes: ['realms:read'],
  });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('examples/device-cli.ts', () => {
  it('signs in with a code the person approves, then with its saved session, until it is revoked', async () => {
    const env = { ISSUER: t.baseUrl, CLIENT_ID: 'realm-cli', TOKEN_FILE: join(dir, 'tokens.json') };
    const first = runExample('device-cli.ts', env);
    const [, uri, code] = await first.waitFor(/open (\S+) and enter the code ([A-Z]{4}-[A-Z]{4})/);
    expect(uri).toBe(`${t.baseUrl}/oauth/device`);
    await answerDevice(t, code!, 'allow');
    await first.waitFor(/API answered 200: \{"realms":\["realm-of-/);
    expect(await first.exited).toBe(0);
    expect(statSync(env.TOKEN_FILE).mode & 0o777).toBe(0o600);

    const second = runExample('device-cli.ts', env);
    await second.waitFor(/Signed in with the saved session\.[^]*API answered 200/);
    expect(await second.exited).toBe(0);

    const [grant] = await t.storage.grants.list({ clientId: 'realm-cli' });
    await revokeApplication(t.server, grant!.userId, 'realm-cli');
    const third = runExample('device-cli.ts', env);
    await third.waitFor(/The saved session no longer works\.[^]*enter the code [A-Z]{4}-[A-Z]{4}/);
    await third.stop();
  }, 60_000);

  it('says so when the person denies', async () => {
    const run = runExample('device-cli.ts', {
      ISSUER: t.baseUrl,
      CLIENT_ID: 'realm-cli',
      TOKEN_FILE: join(dir, 'denied.json'),
    });
    const [, , code] = await run.waitFor(/open (\S+) and enter the code ([A-Z]{4}-[A-Z]{4})/);
    await answerDevice(t, code!, 'deny');
    await run.waitFor(/The sign-in was denied\./);
    expect(await run.exited).toBe(1);
  }, 60_000);
});

describe('examples/native-app.ts', () => {
  it('receives the code on its loopback listener and calls the API', async () => {
    const run = runExample('native-app.ts', { ISSUER: t.baseUrl, CLIENT_ID: 'realm-desktop' });
    const [, url] = await run.waitFor(/Open this URL in your browser to sign in:\n(\S+)/);
    const query = Object.fromEntries(new URL(url!).searchParams);
    t.agent = supertest.agent(t.baseUrl); // another person's browser
    expect(query.redirect_uri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    let res = await authorizeWithLogin(t, query, 'carol');
    if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
    // The browser follows the redirect to the app's listener.
    const back = await fetch(res.headers.location!);
    expect(await back.text()).toContain('You can close this window');
    await run.waitFor(/Signed in\.\nAPI answered 200: \{"realms":\["realm-of-/);
    expect(await run.exited).toBe(0);
  }, 60_000);
});
