/**
 * The developer page (issue 40) in a real browser: Debian's chromium through playwright-core, at a
 * phone's width (375 px). A member signs in at the development provider, creates a confidential
 * web application by clicking and typing, sees its secret once, and a small relying party written
 * with openid-client 6, unmodified, completes the code flow with it in the same browser. The
 * relying party lives at https://stats.example (the application's redirect URI): the browser's
 * request interception hands its requests to this test, which answers them as its server would.
 *
 * Each page must fit the phone (nothing to scroll sideways). Screenshots of the list, the create
 * form, the application's page with its secret (blanked first) and the consent page, at 375 px and
 * 1280 px, go to artifacts/screenshots/; with UPDATE_DOCS_IMAGES=1 also to
 * docs/images/developers-NAME-375.png and developers-NAME-desktop.png.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as client from 'openid-client';
import type { Page, Route } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { chromiumAvailability, launchChromium } from '../support/chromium.js';
import { mountDeveloperPage } from '../support/developers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = `${ROOT}artifacts/screenshots`;
const DOCS_IMAGES = `${ROOT}docs/images`;
const PHONE = { width: 375, height: 740 };
const DESKTOP = { width: 1280, height: 800 };
const RP = 'https://stats.example';

const browser = chromiumAvailability();
const suite = browser.ok ? describe : describe.skip;
const missing = browser.ok ? '' : ` [NOT RUN: ${browser.reason}]`;

/** What the relying party keeps between sending the browser away and its coming back. */
interface RelyingParty {
  config: client.Configuration;
  verifier: string;
  state: string;
  /** The tokens it got, once the browser came back with a code. */
  tokens?: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
}

suite(`the developer page in chromium, at phone and desktop width${missing}`, () => {
  let t: TestApp;
  let chromium: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  let rp: RelyingParty | undefined;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    t = await createTestApp({ scopes: { realms: 'See the list of your realms', profile: 'See your name' } });
    mountDeveloperPage(t);
    chromium = await launchChromium();
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
    await page.setViewportSize(PHONE);
    await page.route(`${RP}/**`, (route) => relyingParty(route));
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  afterEach(async ({ task }) => {
    if (task.result?.state !== 'fail' || !page) return;
    await page.screenshot({ path: `${SCREENSHOTS}/developers-FAILED.png`, fullPage: true }).catch(() => {});
    console.error(`The browser was at ${page.url()}.`);
  });

  /**
   * The relying party's server: `/` links to the authorization URL openid-client built (with
   * PKCE); `/callback` exchanges the code with openid-client and says whose realms it now sees.
   */
  async function relyingParty(route: Route): Promise<void> {
    const url = new URL(route.request().url());
    const answer = (status: number, body: string) =>
      route.fulfill({
        status,
        contentType: 'text/html; charset=utf-8',
        body: `<!doctype html><html lang="en"><head><meta name="viewport" content="width=device-width, initial-scale=1"><title>Realm Stats</title></head><body>${body}</body></html>`,
      });
    try {
      if (!rp) return await answer(503, '<h1>Realm Stats is not set up</h1>');
      if (url.pathname === '/') {
        const authorization = client.buildAuthorizationUrl(rp.config, {
          redirect_uri: `${RP}/callback`,
          scope: 'realms',
          state: rp.state,
          code_challenge: await client.calculatePKCECodeChallenge(rp.verifier),
          code_challenge_method: 'S256',
        });
        return await answer(200, `<h1>Realm Stats</h1><p><a href="${authorization.href}">Sign in</a></p>`);
      }
      if (url.pathname === '/callback') {
        rp.tokens = await client.authorizationCodeGrant(rp.config, url, {
          pkceCodeVerifier: rp.verifier,
          expectedState: rp.state,
        });
        const realms = await fetch(`${t.baseUrl}/v1/realms`, {
          headers: { authorization: `Bearer ${rp.tokens.access_token}` },
        });
        const body = (await realms.json()) as { realms: string[] };
        return await answer(
          200,
          `<h1>Signed in to Realm Stats</h1><p id="realms">${body.realms.join(', ')}</p>`,
        );
      }
      return await answer(404, '<h1>Not found</h1>');
    } catch (err) {
      return answer(500, `<h1>Realm Stats failed</h1><pre id="failure">${String(err)}</pre>`);
    }
  }

  /** The page's width as laid out: more than the viewport means scrolling sideways. */
  const scrollWidth = () => page.evaluate<number>('document.documentElement.scrollWidth');

  /**
   * The short words of the page (under 16 characters) that are broken across two lines: none
   * should be. Prose broken mid-word ("u|ntil") is what `word-break: break-all` did to the
   * application's page; a long identifier (a client id, a URL) may still wrap where it must.
   */
  const brokenWords = () =>
    page.evaluate<string[]>(`(() => {
      const broken = [];
      const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of node.data.matchAll(/\\S+/g)) {
          if (match[0].length >= 16) continue;
          const range = document.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
          if (lines.size > 1) broken.push(match[0]);
        }
      }
      return broken;
    })()`);

  /**
   * The page at 375 px, checked to fit, then at 1280 px: full-page screenshots of both, to
   * artifacts/screenshots/ (and docs/images/ with UPDATE_DOCS_IMAGES=1). Back at 375 px after.
   */
  async function shots(name: string): Promise<void> {
    expect(await scrollWidth(), `${name}: nothing to scroll sideways at 375 px`).toBeLessThanOrEqual(
      PHONE.width,
    );
    await page.evaluate('document.activeElement?.blur()'); // no focus ring in the picture
    const paths: string[] = [];
    for (const [size, viewport] of [
      ['375', PHONE],
      ['desktop', DESKTOP],
    ] as const) {
      await page.setViewportSize(viewport);
      expect(await brokenWords(), `${name} at ${size}: words broken across lines`).toEqual([]);
      const path = `${SCREENSHOTS}/developers-${name}-${size}.png`;
      await page.screenshot({ path, fullPage: true });
      paths.push(path);
    }
    await page.setViewportSize(PHONE);
    if (process.env.UPDATE_DOCS_IMAGES === '1') {
      mkdirSync(DOCS_IMAGES, { recursive: true });
      for (const path of paths) copyFileSync(path, `${DOCS_IMAGES}/${path.split('/').at(-1)}`);
    }
  }

  const mainText = async () => (await page.locator('main').textContent())!.replace(/\s+/g, ' ');

  it('a member signs in, creates an application, sees its secret once; openid-client signs in with it', async () => {
    // A visitor is asked to sign in first, at the provider.
    await page.goto(`${t.baseUrl}/developers`);
    await page.getByRole('heading', { name: 'Sign in to continue to the developer page' }).waitFor();
    await page.getByRole('link', { name: 'Development provider' }).click();
    await page.getByRole('heading', { name: 'Development OpenID provider' }).waitFor();
    await page.getByLabel('User name').fill('alice');
    await page.getByRole('button', { name: 'Sign in' }).click();

    // The list, empty.
    await page.getByRole('heading', { name: 'Your applications' }).waitFor();
    expect(page.url()).toBe(`${t.baseUrl}/developers`);
    expect(await mainText()).toContain('You have no applications yet.');
    expect(await mainText()).toMatch(/Signed in as \S*\/user\/alice/);
    expect(await scrollWidth()).toBeLessThanOrEqual(PHONE.width);

    // The create form, filled in by clicking and typing.
    await page.getByRole('link', { name: 'Create an application' }).click();
    await page.getByRole('heading', { name: 'Create an application' }).waitFor();
    await expect(page.getByRole('radio', { name: /^Web application/ }).isChecked()).resolves.toBe(true);
    await expect(page.getByRole('radio', { name: /^Confidential/ }).isChecked()).resolves.toBe(true);
    await page.getByLabel(/^Name/).click();
    await page.keyboard.type('Realm Stats');
    await page.getByLabel(/^Redirect URI/).click();
    await page.keyboard.type(`${RP}/callback`);
    await page.getByRole('checkbox', { name: /realms/ }).click();
    await page.getByLabel(/^Description/).click();
    await page.keyboard.type('Charts of your realms');
    await page.getByLabel(/^Home page/).click();
    await page.keyboard.type(`${RP}/`);
    expect(await mainText()).toContain("A confidential application's secret is shown once");
    await shots('new');
    await page.getByRole('button', { name: 'Create the application' }).click();

    // The application's page, with its secret this once.
    await page.getByRole('heading', { name: 'Realm Stats', level: 1 }).waitFor();
    const created = await mainText();
    expect(created).toContain('Realm Stats was created.');
    expect(created).toContain('Copy it now: it is shown this once, never again.');
    expect(created).toContain(`Redirect URI ${RP}/callback`);
    expect(created).toContain(`Issuer ${t.baseUrl}`);
    expect(created).toContain('0 members authorized it (at most 100 until the operator verifies it)');
    const clientId = (await page.locator('#client-id').textContent())!;
    const clientSecret = (await page.locator('#client-secret').textContent())!;
    expect(clientSecret).toMatch(/^[\w-]{40,}$/);
    // The picture does not need the real secret: dots of the same length, laid out the same.
    await page.locator('#client-secret').evaluate((code, length) => {
      code.textContent = '•'.repeat(length);
    }, clientSecret.length);
    await shots('app');

    // The relying party, set up with what the page showed, signs the member in.
    rp = {
      config: await client.discovery(
        new URL(t.baseUrl),
        clientId,
        undefined,
        client.ClientSecretBasic(clientSecret),
        { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
      ),
      verifier: client.randomPKCECodeVerifier(),
      state: client.randomState(),
    };
    await page.goto(`${RP}/`);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Do you trust Realm Stats?' }).waitFor();
    const consent = await mainText();
    expect(consent).toMatch(/Made by \S*\/user\/alice, a member of this site\./);
    expect(consent).toContain('The operator has not verified it: trust it only if you know its maker.');
    expect(consent).toContain('“Charts of your realms”');
    expect(consent).toContain('realms: See the list of your realms');
    expect(consent).toContain(`Client id: ${clientId}`);
    await shots('consent');
    await page.getByRole('button', { name: 'Trust Realm Stats' }).click();
    await page.getByRole('heading', { name: 'Signed in to Realm Stats' }).waitFor();
    expect(await page.locator('#realms').textContent()).toMatch(/^realm-of-/);
    expect(rp.tokens).toMatchObject({ token_type: 'bearer', scope: 'realms' });
    const refreshed = await client.refreshTokenGrant(rp.config, rp.tokens!.refresh_token!);
    expect(refreshed.access_token).toBeTruthy();

    // The list, with the application and the member who trusted it.
    await page.goto(`${t.baseUrl}/developers`);
    await page.getByRole('heading', { name: 'Your applications' }).waitFor();
    const list = await mainText();
    expect(list).toContain('Realm Stats');
    expect(list).toContain('Active Not verified web');
    expect(list).toMatch(
      /1 member authorized it \(at most 100 until the operator verifies it\) · last authorized/,
    );
    await shots('list');
    // The secret is never shown again.
    await page.getByRole('link', { name: 'Realm Stats' }).click();
    await page.getByRole('heading', { name: 'Realm Stats', level: 1 }).waitFor();
    await expect(page.locator('#client-secret').count()).resolves.toBe(0);
    expect(await page.content()).not.toContain(clientSecret);
  });
});
