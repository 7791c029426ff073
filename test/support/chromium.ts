import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`); `npx playwright install` cannot work here. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The flags every run uses; the user-data-dir is a fresh temporary folder per launch. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

export type Availability = { ok: true; version: string } | { ok: false; reason: string };

/**
 * Whether chromium runs here. Missing is reported in the suite name and on stderr; under CI it
 * throws instead, failing the test file, so a CI run can never pass without the browser test.
 */
export function chromiumAvailability(): Availability {
  const run = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  const availability: Availability =
    run.error || run.status !== 0
      ? {
          ok: false,
          reason: `${CHROMIUM} cannot run (${run.error?.message ?? run.stderr.trim().split('\n').at(-1)})`,
        }
      : { ok: true, version: run.stdout.trim() };
  if (!availability.ok) {
    if (process.env.CI) throw new Error(`${availability.reason} (CI is set: the browser test must run)`);
    console.warn(
      `NOT RUN: the browser test: ${availability.reason}. Install it with: apt-get install -y --no-install-recommends chromium`,
    );
  }
  return availability;
}

/** A headless chromium with a fresh profile; `close` also deletes the profile. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'oob-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    chromiumSandbox: false,
    args: CHROMIUM_FLAGS,
    viewport: { width: 800, height: 640 },
    deviceScaleFactor: 1,
    locale: 'en-US',
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
