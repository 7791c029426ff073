/**
 * What keeps dynamic registration from filling the database: a per-address limit, a burst per
 * minute and a rate per hour (429 with Retry-After), and the prune that removes a registration no
 * token was ever issued to once its time is past, while keeping one in use (memory and
 * PostgreSQL, on the server's clock).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { memoryStorage, type Storage } from '../../../src/index.js';
import { createTestApp, expectOAuthError, type TestApp, type TestAppOptions } from '../../support/app.js';
import { freshPostgresStorage, postgresAvailability } from '../../support/databases.js';
import { publicCodeFlow, register } from '../../support/registration.js';

const REDIRECT = 'https://mcp-client.example/callback';
const DAY = 86_400_000;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function start(options: TestAppOptions): Promise<TestApp> {
  t = await createTestApp({ scopes: { realms: 'See your realms' }, ...options });
  return t;
}

describe('the per-address limit', () => {
  it('allows a burst per minute, then answers 429 with Retry-After until the minute ends', async () => {
    let now = Date.UTC(2030, 0, 1);
    const app = await start({
      clock: () => now,
      dynamicRegistration: { rateLimit: { maxPerMinute: 3, maxPerHour: 100 } },
    });
    for (let i = 0; i < 3; i++) expect((await register(app, { redirect_uris: [REDIRECT] })).status).toBe(201);
    // Refusals count too: a client that keeps sending nonsense is held back as well.
    const limited = await register(app, { redirect_uris: ['javascript:x'] });
    expectOAuthError(limited, 'temporarily_unavailable', 429);
    expect(Number(limited.headers['retry-after'])).toBe(60);
    now += 30_000;
    const later = await register(app, { redirect_uris: [REDIRECT] });
    expect(later.status).toBe(429);
    expect(Number(later.headers['retry-after'])).toBe(30);
    now += 30_000;
    expect((await register(app, { redirect_uris: [REDIRECT] })).status).toBe(201);
  });

  it('holds to the hourly rate across bursts', async () => {
    let now = Date.UTC(2030, 0, 1);
    const app = await start({
      clock: () => now,
      dynamicRegistration: { rateLimit: { maxPerMinute: 2, maxPerHour: 3 } },
    });
    expect((await register(app, { redirect_uris: [REDIRECT] })).status).toBe(201);
    expect((await register(app, { redirect_uris: [REDIRECT] })).status).toBe(201);
    now += 60_000;
    expect((await register(app, { redirect_uris: [REDIRECT] })).status).toBe(201);
    const limited = await register(app, { redirect_uris: [REDIRECT] });
    expectOAuthError(limited, 'temporarily_unavailable', 429);
    expect(Number(limited.headers['retry-after'])).toBe(3540);
    expect(await app.storage.clients.list!()).toHaveLength(2 + 3);
  });

  it('counts nothing with rateLimit: false', async () => {
    const app = await start({ dynamicRegistration: { rateLimit: false } });
    for (let i = 0; i < 25; i++)
      expect((await register(app, { redirect_uris: [REDIRECT] })).status).toBe(201);
  });
});

const postgres = await postgresAvailability();
const disposers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const dispose of disposers) await dispose();
});

const backends: { name: string; skip: string | null; storage(): Promise<Storage> }[] = [
  { name: 'memory', skip: null, storage: async () => memoryStorage() },
  {
    name: 'PostgreSQL',
    skip: postgres.ok ? null : `NOT TESTED: ${postgres.reason}`,
    async storage() {
      const { storage, dispose } = await freshPostgresStorage('dcr_prune');
      disposers.push(dispose);
      return storage;
    },
  },
];

describe.each(backends)('prune ($name)', (backend) => {
  it.skipIf(backend.skip !== null)(
    `removes a registration unused past dynamicRegistration.unusedTtl, keeps one that got a token${backend.skip ? ` (${backend.skip})` : ''}`,
    async () => {
      // The server's clock, near the system's: the development provider checks its own nonces' times.
      let now = Date.now();
      const app = await start({
        storage: await backend.storage(),
        clock: () => now,
        dynamicRegistration: { unusedTtl: 3600 },
      });
      const unused = (await register(app, { redirect_uris: [REDIRECT], client_name: 'Abandoned' })).body;
      const used = (await register(app, { redirect_uris: [REDIRECT], client_name: 'Connected' })).body;
      await publicCodeFlow(app, { clientId: used.client_id, redirectUri: REDIRECT });
      const prune = app.storage.prune!.bind(app.storage);

      // Not yet: an hour after registering, less a millisecond.
      expect((await prune(now + 3600_000 - 1)).clients).toBe(0);
      expect(await app.storage.clients.find(unused.client_id)).not.toBeNull();

      now += 3600_000;
      const result = await prune(now);
      expect(result.clients).toBe(1);
      expect(await app.storage.clients.find(unused.client_id)).toBeNull();
      expect(await app.storage.clients.find(used.client_id)).not.toBeNull();
      // The operator's clients stay whatever their age.
      expect((await prune(now + 365 * DAY)).clients).toBe(0);
      expect(await app.storage.clients.find(app.codeClient.clientId)).not.toBeNull();
      expect(await app.storage.clients.find(used.client_id)).not.toBeNull();

      // A removed registration is unknown from then on: its client gets an error, not a consent page.
      const authorize = await app.agent.get('/oauth/authorize').query({
        response_type: 'code',
        client_id: unused.client_id,
        redirect_uri: REDIRECT,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      });
      expect(authorize.status).toBe(400);
    },
  );
});
