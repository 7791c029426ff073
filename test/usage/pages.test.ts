/**
 * The figures members see: on the authorized-applications page, when each application last used
 * their account; on the developer page, each of their applications' last use and 30-day counts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { when } from '../../src/pages/layout.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { callRealms, obtainTokens } from '../support/endpoints.js';
import { createApp, mountDeveloperPage, signInAsMember } from '../support/developers.js';

let t: TestApp;
afterEach(() => t?.close());

/** The `<li>` of the application named `name` on a page. */
function itemOf(page: string, name: string): string {
  const item = page.split('<li>').find((part) => part.includes(name));
  expect(item, `${name} is listed`).toBeDefined();
  return item!;
}

describe('per-app usage on the pages', () => {
  it("the applications page says when each application last used the member's account", async () => {
    t = await createTestApp();
    const tokens = await obtainTokens(t);
    await callRealms(t, tokens.access_token);
    // Not written yet: nothing said.
    let page = await t.agent.get('/oauth/applications');
    expect(itemOf(page.text, 'Photo Printer')).not.toContain('last used');

    await t.server.usage!.flush();
    const [grant] = await t.storage.grants.list({ clientId: 'code-client' });
    const [use] = await t.storage.usage!.lastUse({ clientId: 'code-client', userId: grant!.userId });
    page = await t.agent.get('/oauth/applications');
    expect(page.status).toBe(200);
    expect(itemOf(page.text, 'Photo Printer')).toContain(`last used ${when(use!.at)}`);
  });

  it("the developer page shows each of the member's applications' last use and 30-day counts", async () => {
    t = await createTestApp({ scopes: { realms: 'See your realms', profile: 'Your name' } });
    mountDeveloperPage(t);
    await signInAsMember(t);
    expect((await createApp(t)).res.status).toBeLessThan(400);
    let page = await t.agent.get('/developers');
    expect(itemOf(page.text, 'Realm Stats')).toContain(
      'Not used yet · last 30 days: 0 tokens issued, 0 refreshes, 0 bearer uses',
    );

    const [app] = (await t.storage.clients.list!()).filter((c) => c.applicationName === 'Realm Stats');
    const now = t.server.clock();
    t.server.usage!.record('token', app!.clientId, 'someone', now - 1000);
    t.server.usage!.record('bearer', app!.clientId, 'someone', now - 500);
    t.server.usage!.record('bearer', app!.clientId, null, now);
    // 40 days ago: outside the 30 days.
    await t.storage.usage!.add({
      counts: [{ clientId: app!.clientId, day: '2000-01-01', kind: 'bearer', count: 9 }],
      lastUse: [],
    });
    await t.server.usage!.flush();
    page = await t.agent.get('/developers');
    expect(itemOf(page.text, 'Realm Stats')).toContain(
      `Last used ${when(now)} · last 30 days: 1 token issued, 0 refreshes, 2 bearer uses`,
    );
  });
});
