/**
 * The consent page with a Steam persona name and avatar, in Debian's chromium through
 * playwright-core: the Steam-like development provider and the Steam-Web-API-like server of
 * `openid-oauth-bridge/testing`. The avatar's https URL (Steam's CDN, out of reach here) is
 * answered by the browser's request interception with a small generated image, so the page loads
 * it as it would Steam's under its `img-src https:` policy.
 *
 * Screenshots go to artifacts/screenshots/; with UPDATE_DOCS_IMAGES=1 the consent page is also
 * saved as docs/images/consent-steam.png.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { steam } from '../../src/index.js';
import { startDevelopmentProvider, startSteamWebApi } from '../../src/testing/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { chromiumAvailability, launchChromium } from '../support/chromium.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = `${ROOT}artifacts/screenshots`;
const DOCS_IMAGES = `${ROOT}docs/images`;
const KEY = 'SECRETSTEAMKEY0123456789ABCDEF00';
const STEAM_ID = '76561198000000042';

/** A 64×64 avatar: an orange square with a lambda-ish mark, as SVG. */
const AVATAR = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" fill="#e8730c"/><path d="M18 50 L32 14 L36 14 L48 50 L41 50 L33 27 L25 50 Z" fill="#fff"/></svg>`;

const browser = chromiumAvailability();
const suite = browser.ok ? describe : describe.skip;
const missing = browser.ok ? '' : ` [NOT RUN: ${browser.reason}]`;

suite(`the consent page with a Steam persona and avatar, in chromium${missing}`, () => {
  let t: TestApp;
  let op: Awaited<ReturnType<typeof startDevelopmentProvider>>;
  let api: Awaited<ReturnType<typeof startSteamWebApi>>;
  let chromium: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    op = await startDevelopmentProvider({ shape: 'steam' });
    api = await startSteamWebApi({ key: KEY, players: { [STEAM_ID]: { personaname: 'Gordon' } } });
    t = await createTestApp({
      providers: [steam({ baseUrl: op.url, webApi: { key: KEY, baseUrl: api.url } })],
      scopes: { realms: 'See the list of your realms' },
    });
    chromium = await launchChromium();
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
    await page.route('https://avatars.steamstatic.com/**', (route) =>
      route.fulfill({ status: 200, contentType: 'image/svg+xml', body: AVATAR }),
    );
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
    await op?.close();
    await api?.close();
  });

  it('names the account by its persona and shows its avatar', async () => {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
      scope: 'realms',
      state: 'demo',
    });
    await page.goto(`${t.baseUrl}/oauth/authorize?${query}`);
    await page.getByRole('link', { name: 'Steam' }).click();
    await page.getByRole('heading', { name: 'Development OpenID provider' }).waitFor();
    await page.getByLabel('User name').fill(STEAM_ID);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Do you trust Photo Printer?' }).waitFor();
    await expect(page.locator('main').textContent()).resolves.toContain('Signed in as Gordon at Steam');
    const avatar = page.locator('img.avatar');
    await avatar.waitFor();
    // Loaded (not broken): the page's policy allows the https avatar.
    await expect(
      avatar.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
    ).resolves.toBeGreaterThan(0);
    await page.screenshot({ path: `${SCREENSHOTS}/consent-steam.png`, fullPage: true });
    if (process.env.UPDATE_DOCS_IMAGES === '1') {
      mkdirSync(DOCS_IMAGES, { recursive: true });
      const box = (await page.locator('main').boundingBox())!;
      await page.screenshot({
        path: `${DOCS_IMAGES}/consent-steam.png`,
        clip: { x: box.x - 24, y: box.y - 24, width: box.width + 48, height: box.height + 48 },
      });
    }
  });
});
