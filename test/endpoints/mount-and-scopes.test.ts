import express from 'express';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuthorizationServer, memoryStorage, oauthRouter, registerClient } from '../../src/index.js';
import { createTestApp, recordingLogger, redirectParams, type TestApp } from '../support/app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('a client registered for a scope the server does not offer', () => {
  it('gets invalid_scope at its redirect URI, before any sign-in page', async () => {
    t = await createTestApp({ scopes: { realms: 'List your realms' } });
    // The code client is registered for `realms profile`; `profile` is not offered.
    const res = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
      scope: 'realms profile',
      state: 'xyz',
    });
    expect(res.status).toBe(302);
    expect(redirectParams(res.headers.location!)).toMatchObject({ error: 'invalid_scope', state: 'xyz' });
  });
});

describe('routers mounted elsewhere than the path of baseUrl', () => {
  it('say so once in the log, naming where to mount them', async () => {
    const logger = recordingLogger();
    const storage = memoryStorage();
    await registerClient(storage, {
      clientId: 'c',
      applicationName: 'C',
      redirectUri: 'https://c.example/cb',
      scopes: ['realms'],
    });
    const server = createAuthorizationServer({
      baseUrl: 'https://example.com/auth',
      storage,
      providers: [{ name: 'Example', identifier: 'https://id.example.com/' }],
      session: { secret: 'x'.repeat(32) },
      logger,
    });
    const app = express().use(oauthRouter(server));
    await supertest(app).get('/oauth/token');
    await supertest(app).get('/oauth/token');
    const warnings = logger.lines.filter((line) => line.message.includes('mounted at'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('app.use("/auth"');

    const right = express().use('/auth', oauthRouter(server));
    const before = logger.lines.length;
    await supertest(right).get('/auth/oauth/token');
    expect(logger.lines.length).toBe(before);
  });
});
