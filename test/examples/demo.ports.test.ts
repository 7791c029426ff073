/**
 * The demo started again on other ports (PORT) over the same database: its clients move with it.
 * The first start registered the code client's redirect URI on the first ports; without the move,
 * every sign-in from the client application on the new ports was refused as a redirect URI not
 * registered, while the banner printed the new one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startDemo } from '../support/demo-process.js';

const dir = mkdtempSync(join(tmpdir(), 'oob-demo-ports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('moves its clients to the ports of the new start', async () => {
  const env = { DATABASE_URL: `sqlite:${join(dir, 'demo.db')}` };
  const first = await startDemo(env);
  await first.stop();
  const again = await startDemo(env);
  try {
    expect(again.clientUrl).not.toBe(first.clientUrl);
    const redirect = `${again.clientUrl}/callback`;
    expect(again.output()).toContain(`redirect_uri   ${redirect}`);
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: 'demo-code-client',
      redirect_uri: redirect,
      state: 'xyz',
    });
    const res = await fetch(`${again.serverUrl}/oauth/authorize?${query}`, { redirect: 'manual' });
    const page = await res.text();
    expect(page).not.toContain('not registered');
    expect(res.status, page.slice(0, 400)).toBe(200);
  } finally {
    await again.stop();
  }
}, 90_000);
