import express from 'express';
import supertest from 'supertest';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  bearerOf,
  createAuthorizationServer,
  memoryStorage,
  requireBearer,
  type AuthorizationServer,
  type Storage,
} from '../../../src/index.js';
import { registerClient } from '../../../src/index.js';
import { recordConsent, revokeGrant, saveAccessToken } from '../../../src/grants/index.js';
import { hashSecret } from '../../../src/crypto/secrets.js';

let storage: Storage;
let server: AuthorizationServer;
let app: express.Express;

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-03-01T12:00:00Z'));
  storage = memoryStorage();
  server = createAuthorizationServer({
    baseUrl: 'https://auth.example.com',
    storage,
    providers: [{ name: 'Example', identifier: 'https://id.example.com/' }],
    session: { secret: 'x'.repeat(32) },
  });
  await registerClient(storage, {
    clientId: 'c1',
    applicationName: 'Client one',
    redirectUri: 'https://client.example/cb',
    scopes: ['realms', 'admin'],
  });
  app = express();
  app.get('/v1/realms', requireBearer(server), (_req, res) => {
    const caller = bearerOf(res);
    res.json({ user: caller.userId, client: caller.clientId, scopes: caller.scopes });
  });
  app.get('/admin', requireBearer(server, { scopes: ['admin'] }), (_req, res) => {
    res.json({ ok: true });
  });
});
afterEach(() => {
  vi.useRealTimers();
});

const issue = async (scopes = ['realms']) => {
  const { grant } = await recordConsent(server, 'u1', 'c1', scopes);
  const subject = { clientId: 'c1', userId: 'u1', scopes, grantId: grant.grantId };
  const { token, record } = await saveAccessToken(server, subject, 'authorization_code', server.clock());
  return { token, grant, expiresIn: (record.expiresAt! - record.createdAt) / 1000 };
};

describe('requireBearer (RFC 6750)', () => {
  it('passes a valid token and exposes user, client and scopes', async () => {
    const { token } = await issue();
    const res = await supertest(app).get('/v1/realms').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ user: 'u1', client: 'c1', scopes: ['realms'] });
  });

  it('matches the scheme case-insensitively', async () => {
    const { token } = await issue();
    const res = await supertest(app).get('/v1/realms').set('Authorization', `bEaReR ${token}`);
    expect(res.status).toBe(200);
  });

  it('answers a request without credentials with a bare challenge (RFC 6750 3.1)', async () => {
    const res = await supertest(app).get('/v1/realms');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="auth.example.com"');
    expect(res.text).toBe('');
  });

  it.each([
    ['malformed', 'Bearer not a token!'],
    ['empty', 'Bearer '],
    ['unknown', 'Bearer abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG'],
    ['another scheme', 'Basic Zm9vOmJhcg=='],
  ])('%s token: 401 invalid_token', async (name, header) => {
    const res = await supertest(app).get('/v1/realms').set('Authorization', header);
    expect(res.status).toBe(401);
    if (name === 'another scheme') {
      expect(res.headers['www-authenticate']).toBe('Bearer realm="auth.example.com"');
    } else {
      expect(res.headers['www-authenticate']).toMatch(
        /^Bearer realm="auth\.example\.com", error="invalid_token"/,
      );
      expect(res.body.error).toBe('invalid_token');
    }
  });

  it('ignores a token in the query string (header only)', async () => {
    const { token } = await issue();
    const res = await supertest(app).get(`/v1/realms?access_token=${token}`);
    expect(res.status).toBe(401);
  });

  it.each([
    ['the query', (r: supertest.Test, token: string) => r.query({ access_token: token })],
    ['the query, another token', (r: supertest.Test) => r.query({ access_token: 'another' })],
    [
      'a parsed form body',
      (r: supertest.Test, token: string) => r.type('form').send({ access_token: token }),
    ],
  ])('a token in the header and in %s: 400 invalid_request (RFC 6750 2)', async (_name, add) => {
    app = express().use(express.urlencoded({ extended: false }), app);
    const { token } = await issue();
    const res = await add(supertest(app).get('/v1/realms').set('Authorization', `Bearer ${token}`), token);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_request"/);
  });

  it('works for exactly expires_in seconds and not after', async () => {
    const { token, expiresIn } = await issue();
    expect(expiresIn).toBe(3600);
    vi.setSystemTime(new Date('2026-03-01T12:59:59.999Z'));
    expect((await supertest(app).get('/v1/realms').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    vi.setSystemTime(new Date('2026-03-01T13:00:00.000Z'));
    const expired = await supertest(app).get('/v1/realms').set('Authorization', `Bearer ${token}`);
    expect(expired.status).toBe(401);
    expect(expired.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('answers 403 insufficient_scope when a required scope is missing', async () => {
    const { token } = await issue(['realms']);
    const res = await supertest(app).get('/admin').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(403);
    expect(res.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(res.headers['www-authenticate']).toContain('scope="admin"');
  });

  it('refuses a revoked token', async () => {
    const { token, grant } = await issue([]);
    await revokeGrant(server, grant);
    expect((await supertest(app).get('/v1/realms').set('Authorization', `Bearer ${token}`)).status).toBe(401);
  });

  it('answers 500 server_error without internals when storage fails', async () => {
    storage.tokens.find = async () => {
      throw new Error('connection refused to db-secret-host');
    };
    const errors: unknown[] = [];
    const quiet = createAuthorizationServer({
      ...server.options,
      logger: { warn() {}, error: (m, d) => errors.push(d) },
    });
    const local = express().get('/x', requireBearer(quiet), (_req, res) => res.end());
    const res = await supertest(local).get('/x').set('Authorization', 'Bearer abc');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      error: 'server_error',
      error_description: 'The server met an unexpected condition.',
    });
    expect(res.text).not.toContain('db-secret-host');
    expect(errors).toHaveLength(1);
  });
});

describe('requireBearer under faults', () => {
  it('answers 500 when a check after the lookup throws, instead of leaving the request hanging', async () => {
    const { token } = await issue();
    let broken = false;
    const faulty = createAuthorizationServer({
      baseUrl: 'https://auth.example.com',
      storage,
      providers: [{ name: 'Example', identifier: 'https://id.example.com/' }],
      session: { secret: 'x'.repeat(32) },
      clock: () => {
        if (broken) throw new Error('clock broke');
        return Date.now();
      },
      logger: { warn: () => {}, error: () => {} },
    });
    const host = express();
    host.get('/v1/realms', requireBearer(faulty), (_req, res) => res.json({ reached: true }));
    broken = true;
    const res = await supertest(host).get('/v1/realms').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ error: 'server_error' });
  });

  it('accepts an adapter that answers without a promise', async () => {
    const { token } = await issue();
    const found = await storage.tokens.find(hashSecret(token));
    const plain = { ...storage, tokens: { ...storage.tokens, find: () => found } };
    const loose = createAuthorizationServer({
      baseUrl: 'https://auth.example.com',
      storage: plain as unknown as Storage,
      providers: [{ name: 'Example', identifier: 'https://id.example.com/' }],
      session: { secret: 'x'.repeat(32) },
    });
    const host = express();
    host.get('/v1/realms', requireBearer(loose), (_req, res) => res.json({ user: bearerOf(res).userId }));
    const res = await supertest(host).get('/v1/realms').set('Authorization', `Bearer ${token}`);
    expect(res.body).toEqual({ user: 'u1' });
  });
});
