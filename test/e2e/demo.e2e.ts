/**
 * The demo in a real browser, as a person would use it: Debian's chromium driven by
 * playwright-core through `examples/demo.ts`, started as a child process on free ports.
 *
 * Run with `npm run test:e2e` (vitest.e2e.config.ts); `npm test` does not include it. Screenshots
 * of every page go to artifacts/screenshots/ (git-ignored, emptied at the start of each run; CI
 * keeps the folder). With UPDATE_DOCS_IMAGES=1, the selection and consent pages are also saved,
 * cropped to their card, as docs/images/selection.png and consent.png for the README.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page, Request, Response } from 'playwright-core';
import * as client from 'openid-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailability, launchChromium } from '../support/chromium.js';
import { startDemo, type RunningDemo } from '../support/demo-process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = `${ROOT}artifacts/screenshots`;
const DOCS_IMAGES = `${ROOT}docs/images`;

const browser = chromiumAvailability();
const suite = browser.ok ? describe : describe.skip;
const missing = browser.ok ? '' : ` [NOT RUN: ${browser.reason}]`;

suite(`the demo in chromium${missing}`, () => {
  let demo: RunningDemo;
  let chromium: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  /** Every URL the browser requested, to check it stayed on the demo's three servers. */
  const requested: string[] = [];
  /** Every page (document) the browser received, with its status. */
  const documents: { url: URL; status: number }[] = [];
  let shot = 0;

  beforeAll(async () => {
    rmSync(SCREENSHOTS, { recursive: true, force: true });
    mkdirSync(SCREENSHOTS, { recursive: true });
    demo = await startDemo();
    chromium = await launchChromium();
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
    page.on('request', (request: Request) => requested.push(request.url()));
    page.on('response', (response: Response) => {
      if (response.request().resourceType() === 'document') {
        documents.push({ url: new URL(response.url()), status: response.status() });
      }
    });
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await demo?.stop();
  });

  // A failed step leaves the page it stopped on, its URL and the demo's output for inspection.
  afterEach(async ({ task }) => {
    if (task.result?.state !== 'fail' || !page) return;
    await screenshot(`FAILED-${task.name.replace(/\W+/g, '-').slice(0, 40)}`).catch(() => undefined);
    console.error(`The browser was at ${page.url()}.\nDemo output:\n${demo.output()}`);
  });

  /** Saves a numbered full-page screenshot; resolves its path. */
  async function screenshot(name: string): Promise<string> {
    shot += 1;
    const path = `${SCREENSHOTS}/${String(shot).padStart(2, '0')}-${name}.png`;
    await page.screenshot({ path, fullPage: true });
    return path;
  }

  /** With UPDATE_DOCS_IMAGES=1: the page's card and its shadow, as docs/images/NAME.png. */
  async function docsImage(name: string): Promise<void> {
    if (process.env.UPDATE_DOCS_IMAGES !== '1') return;
    mkdirSync(DOCS_IMAGES, { recursive: true });
    const box = (await page.locator('main').boundingBox())!;
    const margin = 24;
    await page.screenshot({
      path: `${DOCS_IMAGES}/${name}.png`,
      clip: {
        x: box.x - margin,
        y: box.y - margin,
        width: box.width + 2 * margin,
        height: box.height + 2 * margin,
      },
    });
  }

  /** The origin of the current page, after any redirects. */
  const at = () => new URL(page.url()).origin;

  it('logs in with the code grant: selection, provider, trust, realms', async () => {
    await page.goto(`${demo.clientUrl}/`);
    await expect(page.getByRole('heading', { name: 'Demo client' }).isVisible()).resolves.toBe(true);
    await screenshot('client-home');

    await page.getByRole('link', { name: 'Log in (authorization code)' }).click();
    await page.getByRole('heading', { name: /Sign in to continue to Demo realm viewer/ }).waitFor();
    expect(at()).toBe(new URL(demo.serverUrl).origin);
    // The presets beside the development provider, each with its icon.
    for (const name of ['Steam', 'Launchpad', 'Ubuntu One']) {
      await expect(page.getByRole('link', { name }).isVisible(), name).resolves.toBe(true);
    }
    await expect(page.locator('.providers img.icon').count()).resolves.toBe(3);
    await screenshot('selection');
    await docsImage('selection');

    await page.getByRole('link', { name: 'Development provider' }).click();
    await page.getByRole('heading', { name: 'Development OpenID provider' }).waitFor();
    expect(at()).toBe(demo.providerUrl);
    await page.getByLabel('User name').fill('alice');
    await screenshot('provider-login');

    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Do you trust Demo realm viewer?' }).waitFor();
    expect(at()).toBe(new URL(demo.serverUrl).origin);
    await expect(page.getByText('See the list of your realms').isVisible()).resolves.toBe(true);
    // The signed-in account and its provider, with the way to another account.
    await expect(
      page.getByText(`Signed in as ${demo.providerUrl}/user/alice at Development provider`).isVisible(),
    ).resolves.toBe(true);
    await expect(
      page.getByRole('button', { name: 'Not you? Sign in as someone else' }).isVisible(),
    ).resolves.toBe(true);
    await screenshot('consent');
    await docsImage('consent');

    await page.getByRole('button', { name: 'Trust Demo realm viewer' }).click();
    await page.getByRole('heading', { name: 'Your realms' }).waitFor();
    expect(page.url()).toBe(`${demo.clientUrl}/`);
    await expectRealms(page, `${demo.providerUrl}/user/alice`);
    await screenshot('realms');
  });

  it('logs in once more without the trust prompt', async () => {
    await page.getByRole('button', { name: 'Forget the tokens' }).click();
    await page.getByRole('heading', { name: 'Demo client' }).waitFor();
    const from = documents.length;
    // This time through the provider button, which skips the selection page (opIdentifier).
    await page.getByRole('link', { name: 'Log in with Development provider' }).click();
    await page.getByRole('heading', { name: 'Your realms' }).waitFor();
    await expectRealms(page, `${demo.providerUrl}/user/alice`);
    await screenshot('realms-again');
    // Still signed in at the server and the application trusted: the server only redirected,
    // and the provider was not visited.
    const seen = documents.slice(from);
    const server = new URL(demo.serverUrl).origin;
    expect(seen.filter((d) => d.url.origin === server).length).toBeGreaterThan(0);
    expect(seen.filter((d) => d.url.origin === server && d.status !== 302 && d.status !== 303)).toEqual([]);
    expect(seen.filter((d) => d.url.origin === demo.providerUrl)).toEqual([]);
  });

  it('gets a token in the browser on the implicit page', async () => {
    await page.goto(`${demo.clientUrl}/implicit`);
    await page.getByRole('heading', { name: 'Implicit flow' }).waitFor();
    await screenshot('implicit');

    await page.getByRole('button', { name: 'Log in (implicit)' }).click();
    // Another application: the browser client is trusted separately.
    await page.getByRole('heading', { name: 'Do you trust Demo realm viewer (browser)?' }).waitFor();
    await screenshot('implicit-consent');
    await page.getByRole('button', { name: 'Trust Demo realm viewer (browser)' }).click();

    await page.getByText(/^Signed in as /).waitFor();
    expect(page.url()).toBe(`${demo.clientUrl}/implicit`); // the script took the token out of the URL
    await expect(page.locator('#out').textContent()).resolves.toBe(
      `Signed in as ${demo.providerUrl}/user/alice. Realms:`,
    );
    await expect(page.locator('#realms li').count()).resolves.toBe(3);
    await screenshot('implicit-realms');
  });

  it('revokes the application on the authorized-applications page and sees the trust prompt again', async () => {
    // The code-grant client still holds its tokens from the tests above.
    await page.goto(`${demo.clientUrl}/`);
    await page.getByRole('heading', { name: 'Your realms' }).waitFor();
    await page.getByRole('link', { name: 'authorized applications' }).click();
    await page.getByRole('heading', { name: 'Authorized applications' }).waitFor();
    expect(at()).toBe(new URL(demo.serverUrl).origin);
    await expect(
      page.getByRole('heading', { name: 'Demo realm viewer', exact: true }).isVisible(),
    ).resolves.toBe(true);
    await screenshot('applications');

    await page.getByRole('button', { name: 'Revoke access of Demo realm viewer', exact: true }).click();
    await page.getByText('Demo realm viewer no longer has access to your account.').waitFor();
    await expect(page.getByRole('heading', { name: 'Demo realm viewer', exact: true }).count()).resolves.toBe(
      0,
    );
    await screenshot('applications-revoked');

    // Still signed in at the server, but no longer trusted: the prompt is back.
    await page.goto(`${demo.clientUrl}/`);
    const forget = page.getByRole('button', { name: 'Forget the tokens' });
    if (await forget.isVisible()) await forget.click();
    await page.getByRole('link', { name: 'Log in with Development provider' }).click();
    await page.getByRole('heading', { name: 'Do you trust Demo realm viewer?' }).waitFor();
    await screenshot('consent-again');
  });

  it('stayed on the demo: the browser requested nothing but its three servers', () => {
    // (Before the OpenID Connect test, whose relying party is a fourth origin.)
    const origins = new Set(requested.map((url) => new URL(url).origin));
    expect(requested.length).toBeGreaterThan(10);
    expect([...origins].sort()).toEqual(
      [new URL(demo.serverUrl).origin, demo.clientUrl, demo.providerUrl].sort(),
    );
  });

  it('signs in an OpenID Connect app: openid-client gets an ID token and UserInfo from the demo', async () => {
    const secret = /Demo OpenID Connect app[\s\S]*?client_secret\s+(\S+)/.exec(demo.output())?.[1];
    expect(secret, demo.output()).toBeDefined();
    const config = await client.discovery(
      new URL(demo.serverUrl),
      'demo-oidc-client',
      undefined,
      client.ClientSecretBasic(secret!),
      { execute: [client.allowInsecureRequests] },
    );
    const verifier = client.randomPKCECodeVerifier();
    const [state, nonce] = [client.randomState(), client.randomNonce()];
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: 'http://127.0.0.1:8080/callback',
      scope: 'openid profile',
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    // The relying party's callback: nothing listens there; the browser's arrival is the answer.
    const arrived = new Promise<string>((resolve) => {
      void page.route('http://127.0.0.1:8080/**', async (route) => {
        resolve(route.request().url());
        await route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in' });
      });
    });
    await page.goto(url.href);
    // Signed in already (the tests above), not yet trusting this application: the consent page.
    await page.getByRole('heading', { name: 'Do you trust Demo OpenID Connect app?' }).waitFor();
    await screenshot('oidc-consent');
    await page.getByRole('button', { name: 'Trust Demo OpenID Connect app' }).click();
    const tokens = await client.authorizationCodeGrant(config, new URL(await arrived), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: demo.serverUrl, aud: 'demo-oidc-client', nonce });
    expect(claims.sub).not.toContain('/user/alice');
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(userinfo.sub).toBe(claims.sub);
  });
});

/** The client's realms page: the owner and the three realms the demo gives every new user. */
async function expectRealms(page: Page, owner: string): Promise<void> {
  await expect(page.getByText(`Signed in as ${owner}.`).isVisible()).resolves.toBe(true);
  const realms = await page.locator('main li, body li').allTextContents();
  for (const name of ['Sandbox', 'Staging', 'Production']) {
    expect(realms.some((text) => text.startsWith(name))).toBe(true);
  }
}
