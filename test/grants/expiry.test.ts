/**
 * One time source: everything the server issues is stamped, and every expiry checked, with
 * `options.clock`. Boundaries are exact (valid 1 ms before, refused at the instant of expiry), and
 * a clock that jumps forward shortens what is alive by the jump, as the README says.
 */
import supertest from 'supertest';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { hashSecret } from '../../src/crypto/secrets.js';
import { memoryStorage, type Storage } from '../../src/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { api, exchange, refresh, seedCode, seedTokens } from '../support/faults.js';

/** A server clock far from the system's, so a stray Date.now() would show. */
const START = Date.parse('2031-05-04T10:00:00.000Z');
let now = START;
let t: TestApp;
let storage: Storage;

beforeEach(async () => {
  now = START;
  storage = memoryStorage();
  t = await createTestApp({
    storage,
    clock: () => now,
    tokens: { accessTokenTtl: 60, codeTtl: 30 },
    session: { secret: 'a test session secret that is long enough', maxAge: 120 },
  });
});
afterEach(async () => {
  vi.useRealTimers();
  await t.close();
});

describe('expiry boundaries on the injected clock', () => {
  it('an access token works 1 ms before expires_in ends, not at that instant', async () => {
    const { accessToken } = await seedTokens(t);
    const record = await storage.tokens.find(hashSecret(accessToken));
    expect(record?.token).toMatchObject({ createdAt: START, expiresAt: START + 60_000 });
    now = START + 60_000 - 1;
    expect((await api(t, accessToken)).res.status).toBe(200);
    now = START + 60_000;
    const expired = await api(t, accessToken);
    expect(expired.res.status).toBe(401);
    expect(expired.res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('a code is exchanged 1 ms before codeTtl ends, and refused at that instant', async () => {
    const early = await seedCode(t);
    const late = await seedCode(t);
    now = START + 30_000 - 1;
    expect((await exchange(t, early)).res.status).toBe(200);
    now = START + 30_000;
    const refused = await exchange(t, late);
    expect(refused.res.status).toBe(400);
    expect(JSON.parse(refused.text)).toMatchObject({ error: 'invalid_grant' });
  });

  it('tokens issued by the token endpoint are stamped with the server clock', async () => {
    now = START + 5_000;
    const answer = await exchange(t, await seedCode(t));
    const body = JSON.parse(answer.text) as { access_token: string; expires_in: number };
    expect(body.expires_in).toBe(60);
    expect((await storage.tokens.find(hashSecret(body.access_token)))?.token).toMatchObject({
      createdAt: START + 5_000,
      expiresAt: START + 65_000,
    });
  });

  it('a login session ends session.maxAge after its last request, on the server clock', async () => {
    // The system clock is ten years behind the server's: the session must follow the latter.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(START - 10 * 365 * 86_400_000));
    const browsers = [supertest.agent(t.baseUrl), supertest.agent(t.baseUrl)] as const;
    for (const browser of browsers) {
      const started = await browser.get('/oauth/authorize').query({
        response_type: 'code',
        client_id: t.codeClient.clientId,
        redirect_uri: 'https://client.example/cb',
        state: 's',
      });
      expect(started.status).toBe(200); // the selection page; the pending request is in the session
    }
    now = START + 120_000 - 1;
    expect((await browsers[0].get('/oauth/authorize/resume')).status).toBe(200);
    now = START + 120_000;
    const gone = await browsers[1].get('/oauth/authorize/resume');
    expect(gone.status).toBe(400);
    expect(gone.text).toContain('no sign-in in progress');
  });
});

describe('a clock that jumps forward', () => {
  it('ends access tokens early; the refresh token, valid until revoked, gets a new one', async () => {
    const { accessToken, refreshToken } = await seedTokens(t);
    now = START + 3_600_000; // NTP steps the clock an hour ahead
    expect((await api(t, accessToken)).res.status).toBe(401);
    const refreshed = await refresh(t, refreshToken);
    expect(refreshed.res.status, refreshed.text).toBe(200);
    expect((await api(t, JSON.parse(refreshed.text).access_token)).res.status).toBe(200);
  });
});
