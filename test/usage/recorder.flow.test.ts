/**
 * Per-app usage over a real flow, on memory, SQLite and PostgreSQL: a code exchange, a refresh,
 * bearer requests and a client's own token are counted in memory, and written by a flush.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerClient, type Storage } from '../../src/index.js';
import { usageDay } from '../../src/storage/usage-types.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { basicAuth, callRealms, obtainTokens, refreshWith, storageEngines } from '../support/endpoints.js';

const engines = await storageEngines();

describe.each(engines)('per-app usage on $name storage', ({ skip, open }) => {
  const test = it.skipIf(skip !== null);
  const suffix = skip === null ? '' : ` (${skip})`;
  let t: TestApp;
  let storage: Storage;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    if (skip !== null) return;
    ({ storage, dispose } = await open());
    t = await createTestApp({ storage, scopes: { realms: 'See your realms', profile: 'Your name' } });
  });
  afterEach(async () => {
    if (skip !== null) return;
    await t.close();
    await dispose();
  });

  test(`a code exchange, a refresh and bearer uses are written by the next flush${suffix}`, async () => {
    const tokens = await obtainTokens(t);
    expect((await refreshWith(t, tokens.refresh_token)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await callRealms(t, tokens.access_token)).status).toBe(200);
    // Counted, not written yet.
    const today = usageDay(t.server.clock());
    expect(await storage.usage!.counts({ clientId: 'code-client', since: today })).toEqual([]);

    await t.server.usage!.flush();
    expect(await storage.usage!.counts({ clientId: 'code-client', since: today })).toEqual([
      { clientId: 'code-client', day: today, kind: 'bearer', count: 3 },
      { clientId: 'code-client', day: today, kind: 'refresh', count: 1 },
      { clientId: 'code-client', day: today, kind: 'token', count: 1 },
    ]);
    const [grant] = await storage.grants.list({ clientId: 'code-client' });
    const uses = await storage.usage!.lastUse({ clientId: 'code-client' });
    expect(uses.map((use) => use.userId)).toEqual([null, grant!.userId]);
    for (const use of uses) expect(Math.abs(use.at - Date.now())).toBeLessThan(60_000);

    // A second flush adds to the counts.
    await callRealms(t, tokens.access_token);
    await t.server.usage!.flush();
    const bearer = await storage.usage!.counts({ clientId: 'code-client', since: today });
    expect(bearer.find((c) => c.kind === 'bearer')?.count).toBe(4);
  });

  test(`a client credentials client is counted, with no account${suffix}`, async () => {
    const bot = await registerClient(t.server, {
      applicationName: 'Stats crawler',
      grantType: 'client_credentials',
      clientId: 'stats-bot',
      scopes: ['realms'],
    });
    const res = await t.agent
      .post('/oauth/token')
      .type('form')
      .set('Authorization', basicAuth(bot.clientId, bot.clientSecret!))
      .send({ grant_type: 'client_credentials' });
    expect(res.status).toBe(200);
    expect((await callRealms(t, res.body.access_token)).status).toBe(200);
    await t.server.usage!.flush();
    const today = usageDay(t.server.clock());
    expect(await storage.usage!.counts({ clientId: 'stats-bot', since: today })).toEqual([
      { clientId: 'stats-bot', day: today, kind: 'bearer', count: 1 },
      { clientId: 'stats-bot', day: today, kind: 'token', count: 1 },
    ]);
    expect((await storage.usage!.lastUse({ clientId: 'stats-bot' })).map((use) => use.userId)).toEqual([
      null,
    ]);
  });
});
