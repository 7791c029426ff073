import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import { Passport } from 'passport';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelyingParty } from '../../../src/login/openid/relying-party.js';
import { OpenIdStrategy } from '../../../src/login/openid/strategy.js';
import {
  startDevelopmentProvider,
  type RunningDevelopmentProvider,
} from '../../../src/testing/provider/index.js';
import { loginAtProvider, memoryNonces } from '../../support/openid-harness.js';

let op: RunningDevelopmentProvider;
let server: Server;
let base: string;

/** A tiny RP app: GET /login begins, GET|POST /callback finishes; outcomes are sent as JSON. */
function createTestApp(rp: RelyingParty, origin: string): express.Express {
  const app = express();
  const passport = new Passport();
  passport.use(new OpenIdStrategy(rp, { origin }));
  app.use(session({ secret: 'test-only', resave: false, saveUninitialized: false }));
  const authenticate: express.RequestHandler = (req, res, next) =>
    passport.authenticate(
      'openid-oauth-bridge',
      { session: false, failWithError: false },
      (err: unknown, user: unknown, info: unknown) => {
        if (err) return next(err);
        if (!user) return res.status(400).json({ failed: info });
        res.json({ user });
      },
    )(req, res, next);
  app.get('/login', authenticate);
  app.get('/callback', authenticate);
  app.post('/callback', express.urlencoded({ extended: false }), authenticate);
  app.get('/no-session', (req, res, next) => {
    delete (req as { session?: unknown }).session;
    authenticate(req, res, next);
  });
  app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).json({ error: err.message });
  });
  return app;
}

beforeAll(async () => {
  op = await startDevelopmentProvider();
  // The app needs the port for returnTo, so the server starts first and the app is plugged in after.
  const holder: { app?: express.Express } = {};
  server = createServer((req, res) => holder.app!(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rp = new RelyingParty({
    providers: [{ name: 'Development', identifier: op.identifier }],
    returnTo: `${base}/callback`,
    realm: `${base}/`,
    nonces: memoryNonces(),
    clock: Date.now,
  });
  holder.app = createTestApp(rp, base);
});
afterAll(async () => {
  await op.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function beginLogin(agent: ReturnType<typeof request.agent>): Promise<string> {
  const res = await agent.get('/login').query({ openid_identifier: op.identifier });
  expect(res.status).toBe(302);
  expect(res.headers.location).toMatch(new RegExp(`^${op.endpoint}\\?`));
  return res.headers.location as string;
}

describe('OpenIdStrategy with express-session', () => {
  it('logs in through a GET callback and passes { identifier, provider, accountKey } to success', async () => {
    const agent = request.agent(base);
    const callback = await loginAtProvider(await beginLogin(agent), 'alice');
    const res = await agent.get(callback.pathname + callback.search);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      user: { identifier: op.userUrl('alice'), provider: 'Development', accountKey: op.userUrl('alice') },
    });
  });

  it('uses the login state once: the same callback again fails as expired', async () => {
    const agent = request.agent(base);
    const callback = await loginAtProvider(await beginLogin(agent), 'alice');
    expect((await agent.get(callback.pathname + callback.search)).status).toBe(200);
    const again = await agent.get(callback.pathname + callback.search);
    expect(again.status).toBe(400);
    expect(again.body.failed).toMatchObject({ kind: 'expired' });
  });

  it('refuses a POST callback', async () => {
    const agent = request.agent(base);
    const callback = await loginAtProvider(await beginLogin(agent), 'alice');
    const res = await agent.post('/callback').type('form').send(Object.fromEntries(callback.searchParams));
    expect(res.status).toBe(400);
    expect(res.body.failed).toMatchObject({ kind: 'invalid_response' });
  });

  it('refuses a callback delivered to another session (login CSRF)', async () => {
    const attacker = request.agent(base);
    const victim = request.agent(base);
    const callback = await loginAtProvider(await beginLogin(attacker), 'mallory');
    await beginLogin(victim);
    const res = await victim.get(callback.pathname + callback.search);
    expect(res.status).toBe(400);
    expect(res.body.failed).toMatchObject({ kind: 'invalid_response' });
  });

  it('fails a callback without a login in progress, and an unknown or repeated openid_identifier', async () => {
    const res = await request(base).get('/callback').query({ 'openid.mode': 'id_res' });
    expect(res.body.failed).toMatchObject({ kind: 'expired' });
    for (const query of [
      'openid_identifier=http%3A%2F%2Fevil.test%2F',
      '',
      `openid_identifier=Development&openid_identifier=Development`,
    ]) {
      const begin = await request(base).get(`/login?${query}`);
      expect(begin.status).toBe(400);
      expect(begin.body.failed).toMatchObject({ kind: 'unknown_provider' });
      expect(typeof begin.body.failed.message).toBe('string');
    }
  });

  it('accepts a provider name as openid_identifier', async () => {
    const res = await request(base).get('/login').query({ openid_identifier: 'Development' });
    expect(res.status).toBe(302);
  });

  it('errors without a session middleware', async () => {
    const res = await request(base).get('/no-session');
    expect(res.status).toBe(500);
    expect(res.body.error).toMatch(/session/);
  });
});
