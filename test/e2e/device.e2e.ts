/**
 * The device verification page (RFC 8628 3.3) in a real browser: Debian's chromium through
 * playwright-core, at a phone's width, driven by the keyboard alone (no click), as a person who
 * opens `verification_uri_complete` from a QR code on a TV or a terminal would. The device is this
 * test's polling of the token endpoint.
 *
 * Screenshots go to artifacts/screenshots/; with UPDATE_DOCS_IMAGES=1 the code page and the
 * consent page of a device are also saved as docs/images/device-code.png and device-consent.png.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { chromiumAvailability, launchChromium } from '../support/chromium.js';
import { pollToken, registerDeviceClient, requestDeviceCode } from '../support/device.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = `${ROOT}artifacts/screenshots`;
const DOCS_IMAGES = `${ROOT}docs/images`;
const PHONE = { width: 375, height: 740 };

const browser = chromiumAvailability();
const suite = browser.ok ? describe : describe.skip;
const missing = browser.ok ? '' : ` [NOT RUN: ${browser.reason}]`;

suite(`the device verification page in chromium, keyboard only, at phone width${missing}`, () => {
  let t: TestApp;
  let chromium: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    t = await createTestApp({
      device: { interval: 1 },
      scopes: { realms: 'See the list of your realms', profile: 'See your name' },
    });
    await registerDeviceClient(t.storage, ['realms', 'profile']);
    chromium = await launchChromium();
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
    await page.setViewportSize(PHONE);
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  async function shot(name: string, docs?: string): Promise<void> {
    await page.screenshot({ path: `${SCREENSHOTS}/device-${name}.png`, fullPage: true });
    if (docs && process.env.UPDATE_DOCS_IMAGES === '1') {
      mkdirSync(DOCS_IMAGES, { recursive: true });
      await page.screenshot({ path: `${DOCS_IMAGES}/${docs}.png`, fullPage: true });
    }
  }

  /** Whether the page is wider than the phone: nothing may need sideways scrolling. */
  const overflows = () => page.evaluate<boolean>('document.documentElement.scrollWidth > window.innerWidth');

  it('a wrong code says so; the right one, the sign-in and the approval by keyboard; the device gets its tokens', async () => {
    const started = await requestDeviceCode(t, { client_id: 'realm-cli', scope: 'realms profile' });
    const device = started.body as {
      device_code: string;
      user_code: string;
      verification_uri_complete: string;
    };

    // A mistyped code first: the page says so and keeps the form, focused, to try again.
    await page.goto(`${t.baseUrl}/oauth/device`);
    await expect(page.locator(':focus').getAttribute('id')).resolves.toBe('user_code');
    await page.keyboard.type('BCDF-GHJK');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/wrong, has expired or was used/);
    await expect(overflows()).resolves.toBe(false);
    await shot('wrong-code');

    // The complete URI fills the code in; nothing happens until the person confirms it.
    await page.goto(device.verification_uri_complete);
    await expect(page.locator('#user_code').inputValue()).resolves.toBe(device.user_code);
    await expect(page.getByRole('heading', { name: 'Connect a device' }).isVisible()).resolves.toBe(true);
    await expect(overflows()).resolves.toBe(false);
    await shot('code', 'device-code');
    expect((await pollToken(t, { device_code: device.device_code, client_id: 'realm-cli' })).body.error).toBe(
      'authorization_pending',
    );
    // The form carries no CSRF token: its post must say where it comes from. Chromium sends
    // Sec-Fetch-Site; its Origin (the page's own, not `null`, thanks to the page's
    // Referrer-Policy) is what a browser without Sec-Fetch-Site relies on.
    const posted = page.waitForRequest(
      (r) => r.method() === 'POST' && new URL(r.url()).pathname === '/oauth/device',
    );
    await page.keyboard.press('Tab');
    await expect(page.locator(':focus').innerText()).resolves.toBe('Continue');
    await page.keyboard.press('Enter');
    const headers = await (await posted).allHeaders();
    expect(headers.origin).toBe(new URL(t.baseUrl).origin);
    expect(headers['sec-fetch-site']).toBe('same-origin');

    // The provider selection: Tab to the provider's button, Enter.
    await page.getByRole('heading', { name: /Sign in to continue to Realm CLI/ }).waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    // The development provider's form: the user name field, then Enter.
    await page.getByRole('heading', { name: 'Development OpenID provider' }).waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('alice');
    await page.keyboard.press('Enter');

    // The consent page names the application, the scopes, the code and the account.
    await page.getByRole('heading', { name: 'Do you trust Realm CLI?' }).waitFor();
    const consent = (await page.locator('main').textContent())!;
    expect(consent).toContain(device.user_code);
    expect(consent).toContain('See the list of your realms');
    expect(consent).toMatch(/Signed in as .*alice/);
    await expect(overflows()).resolves.toBe(false);
    await shot('consent', 'device-consent');
    await page.keyboard.press('Tab');
    await expect(page.locator(':focus').innerText()).resolves.toBe('Trust Realm CLI');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    await shot('connected');

    // The device's next poll, its interval (1 s here) after the last one.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const tokens = await pollToken(t, { device_code: device.device_code, client_id: 'realm-cli' });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('realms profile');
  });
});
