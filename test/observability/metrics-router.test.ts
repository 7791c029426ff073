/**
 * Who reads the Prometheus router, and how many series it keeps: the default rule answers requests
 * from this machine that no proxy forwarded, `allow` replaces it (a rule that throws refuses);
 * after 1,000 self-registered clients that each made requests, the number of series is what it
 * was after three.
 */
import type { Request } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { loopbackOnly, metricsRouter, type MetricsRouter } from '../../src/observability/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { samples, valueOf } from '../support/prometheus-text.js';
import { register } from '../support/registration.js';

let t: TestApp | undefined;
let metrics: MetricsRouter | undefined;
afterEach(async () => {
  metrics?.stop();
  metrics = undefined;
  await t?.close();
  t = undefined;
});

/** A request as the rule sees it: the connection's address and the headers. */
const requestFrom = (remoteAddress: string | undefined, headers: Record<string, string> = {}) =>
  ({ headers, socket: { remoteAddress } }) as unknown as Request;

describe('the default rule (loopbackOnly)', () => {
  it.each(['127.0.0.1', '127.8.9.10', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::FFFF:127.0.0.2'])(
    'answers %s',
    (address) => expect(loopbackOnly(requestFrom(address))).toBe(true),
  );

  it.each([
    '10.0.0.1',
    '192.168.1.20',
    '128.0.0.1',
    '::ffff:10.0.0.1',
    '2001:db8::1',
    'fe80::1',
    '::2',
    '::',
  ])('refuses %s', (address) => expect(loopbackOnly(requestFrom(address))).toBe(false));

  it('refuses a request without an address, and one a proxy forwarded, even over loopback', () => {
    expect(loopbackOnly(requestFrom(undefined))).toBe(false);
    expect(loopbackOnly(requestFrom('127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }))).toBe(false);
    expect(loopbackOnly(requestFrom('127.0.0.1', { forwarded: 'for=203.0.113.9' }))).toBe(false);
    expect(loopbackOnly(requestFrom('::1', { 'x-real-ip': '203.0.113.9' }))).toBe(false);
  });
});

describe('the router', () => {
  it('mounted under a prefix of its own, answers there and nowhere else', async () => {
    t = await createTestApp();
    metrics = metricsRouter(t.server);
    t.app.use('/internal', metrics);
    const res = await t.agent.get('/internal/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toContain('# TYPE oauth_request_duration_seconds histogram');
    expect((await t.agent.get('/metrics')).status).toBe(404);
  });

  it('answers a loopback request, and refuses one a proxy on this machine forwarded', async () => {
    t = await createTestApp();
    metrics = metricsRouter(t.server);
    t.app.use(metrics);
    const res = await t.agent.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain('# TYPE oauth_token_requests_total counter');
    const forwarded = await t.agent.get('/metrics').set('X-Forwarded-For', '203.0.113.9');
    expect(forwarded.status).toBe(403);
    expect(forwarded.text).not.toContain('oauth_');
    expect((await t.agent.post('/metrics')).status).toBe(405);
    // Another path is the host's.
    expect((await t.agent.get('/metrics/other')).status).toBe(404);
  });

  it("answers whom the host's allow says: a bearer check here; a rule that throws refuses", async () => {
    t = await createTestApp();
    metrics = metricsRouter(t.server, {
      allow: (req) => req.get('authorization') === 'Bearer scrape-secret-0123456789',
    });
    t.app.use(metrics);
    expect((await t.agent.get('/metrics')).status).toBe(403);
    const allowed = await t.agent.get('/metrics').set('Authorization', 'Bearer scrape-secret-0123456789');
    expect(allowed.status).toBe(200);
    metrics.stop();
    metrics = metricsRouter(t.server, {
      path: '/internal/metrics',
      allow: () => Promise.reject(new Error('the rule failed')),
    });
    t.app.use(metrics);
    expect((await t.agent.get('/internal/metrics')).status).toBe(403);
  });

  it('leaves the answer to a rule that sent one itself (a 401 with its challenge), and the process running', async () => {
    t = await createTestApp();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      metrics = metricsRouter(t.server, {
        allow: async (req) => {
          if (req.get('authorization') === 'Bearer scrape-secret-0123456789') return true;
          req.res!.status(401).set('WWW-Authenticate', 'Bearer realm="metrics"').end();
          return false;
        },
      });
      t.app.use(metrics);
      const refused = await t.agent.get('/metrics');
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      expect(
        (await t.agent.get('/metrics').set('Authorization', 'Bearer scrape-secret-0123456789')).status,
      ).toBe(200);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('refuses options it cannot use, saying which', () => {
    const server = { events: { on: () => () => {} }, options: { providers: [] } } as never;
    expect(() => metricsRouter(server, { path: 'metrics' })).toThrow(/path must start with "\/"/);
    expect(() => metricsRouter(server, { allow: true as never })).toThrow(/allow must be a function/);
  });
});

/** The series of a text: each sample's name and labels, a histogram's buckets as one. */
function seriesOf(text: string): Set<string> {
  return new Set(
    samples(text).map(({ name, labels }) => {
      const rest = Object.entries(labels).filter(([label]) => label !== 'le');
      return `${name.replace(/_(bucket|sum|count)$/, '')}${JSON.stringify(rest)}`;
    }),
  );
}

describe('series, whatever the number of clients', () => {
  it('stay as many after 1,000 self-registered clients as after three', async () => {
    t = await createTestApp({ dynamicRegistration: { rateLimit: false }, rateLimit: false });
    metrics = metricsRouter(t.server);
    t.app.use(metrics);
    const app = t;
    const ids: string[] = [];
    /** One client registers, then fails at the token endpoint twice: a wrong code, a secret it has not. */
    const oneClient = async (i: number) => {
      const redirect = `https://app-${i}.example/cb`;
      const registered = await register(app, { redirect_uris: [redirect], client_name: `App ${i}` });
      expect(registered.status).toBe(201);
      const clientId = (registered.body as { client_id: string }).client_id;
      ids.push(clientId);
      const token = { grant_type: 'authorization_code', code: `code-${i}`, redirect_uri: redirect };
      const exchange = { ...token, client_id: clientId, code_verifier: 'v'.repeat(43) };
      expect((await app.agent.post('/oauth/token').type('form').send(exchange)).status).toBe(400);
      const withSecret = { ...token, client_id: clientId, client_secret: 'guess' };
      expect((await app.agent.post('/oauth/token').type('form').send(withSecret)).status).toBe(401);
    };
    const many = async (from: number, count: number) => {
      for (let i = from; i < from + count; i += 25) {
        await Promise.all(Array.from({ length: Math.min(25, from + count - i) }, (_, k) => oneClient(i + k)));
      }
    };

    await many(0, 3);
    const after3 = (await app.agent.get('/metrics')).text;
    await many(3, 1000);
    const after1003 = (await app.agent.get('/metrics')).text;

    expect(valueOf(after1003, 'oauth_client_registrations_total', { outcome: 'success' })).toBe(1003);
    expect(valueOf(after1003, 'oauth_client_authentication_failures_total', { client_kind: 'dynamic' })).toBe(
      1003,
    );
    expect([...seriesOf(after1003)].sort()).toEqual([...seriesOf(after3)].sort());
    expect(seriesOf(after1003).size).toBeLessThan(40);
    for (const id of ids) expect(after1003).not.toContain(id);
  }, 120_000);
});
