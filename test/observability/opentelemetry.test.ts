/**
 * OpenTelemetry, optional (issue 41): with the SDK's in-memory exporter, one span per endpoint
 * request and per outbound call (OpenID 2.0 discovery and verification, a client metadata
 * document, the Steam Web API), nested in the request that made it; no attribute holds a token,
 * code, secret, cookie, URL or raw client id the test issued or used; counters and histograms
 * through the global meter.
 *
 * The OpenTelemetry packages are devDependencies and loaded here only, with `import()`: without
 * them this file says so and is skipped, and the rest of the suite runs as it does
 * (test/observability/without-opentelemetry.test.ts checks the library never asks for them).
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { createRequire } from 'node:module';
import type * as Api from '@opentelemetry/api';
import type * as ContextAsyncHooks from '@opentelemetry/context-async-hooks';
import type * as SdkMetrics from '@opentelemetry/sdk-metrics';
import type * as SdkTrace from '@opentelemetry/sdk-trace-base';
import type { Express } from 'express';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireBearer, steam } from '../../src/index.js';
import {
  openTelemetry,
  TRACE_NAMES,
  traceChannel,
  type Figure,
  type OpenTelemetryInstrumentation,
} from '../../src/observability/index.js';
import {
  startDevelopmentProvider,
  startSteamWebApi,
  type RunningSteamWebApi,
} from '../../src/testing/index.js';
import { CODE_REDIRECT, createTestApp, type TestApp, type TestAppOptions } from '../support/app.js';
import {
  clientDocument,
  documentClientQuery,
  startDocumentServer,
  type DocumentServer,
} from '../support/document-server.js';
import { callRealms, mountClientEndpoints, postAs } from '../support/endpoints.js';
import { authorizeWithLogin, exchangeCode, obtainCode, refreshWith } from '../support/flow.js';

const PACKAGES = [
  '@opentelemetry/api',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/context-async-hooks',
];
const resolvable = (name: string) => {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
};
const missing = PACKAGES.filter((name) => !resolvable(name));
if (missing.length > 0) {
  console.warn(
    `SKIPPED test/observability/opentelemetry.test.ts: ${missing.join(', ')} not installed ` +
      '(devDependencies: `npm ci` installs them)',
  );
}
const suite = missing.length === 0 ? describe : describe.skip;
const skipped = missing.length === 0 ? '' : ` (SKIPPED: ${missing.join(', ')} not installed)`;

let api: typeof Api;
let sdk: typeof SdkTrace;
let metricsSdk: typeof SdkMetrics;
let asyncHooks: typeof ContextAsyncHooks;
let exporter: SdkTrace.InMemorySpanExporter;
let otel: OpenTelemetryInstrumentation | undefined;
let t: TestApp | undefined;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  if (missing.length > 0) return;
  api = await import('@opentelemetry/api');
  sdk = await import('@opentelemetry/sdk-trace-base');
  metricsSdk = await import('@opentelemetry/sdk-metrics');
  asyncHooks = await import('@opentelemetry/context-async-hooks');
});

afterEach(async () => {
  otel?.stop();
  otel = undefined;
  await t?.close();
  t = undefined;
  for (const close of closers.splice(0)) await close();
  if (missing.length > 0) return;
  api.trace.disable();
  api.context.disable();
  api.metrics.disable();
});

/** A tracer provider with the in-memory exporter, registered globally, then the library's spans. */
async function startTracing(options: { contextManager?: boolean } = {}) {
  exporter = new sdk.InMemorySpanExporter();
  api.trace.setGlobalTracerProvider(
    new sdk.BasicTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(exporter)] }),
  );
  if (options.contextManager) {
    api.context.setGlobalContextManager(new asyncHooks.AsyncLocalStorageContextManager().enable());
  }
  otel = await openTelemetry();
}

/** Ended spans, once the requests' last continuations (where spans end) have run. */
async function spans(): Promise<SdkTrace.ReadableSpan[]> {
  await new Promise((resolve) => setImmediate(resolve));
  return exporter.getFinishedSpans();
}

/** Everything a span says, as text: what the secrets are searched in. */
function spansText(all: readonly SdkTrace.ReadableSpan[]): string {
  return JSON.stringify(
    all.map((s) => ({
      name: s.name,
      attributes: s.attributes,
      status: s.status,
      events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })),
      links: s.links,
    })),
  );
}

/** The requests and calls the library's channels saw start: what the spans must match one for one. */
function countStarts() {
  const seen: string[] = [];
  const unsubscribe = TRACE_NAMES.map((name) => {
    const handlers = {
      start: (context: object) => {
        const c = context as { endpoint?: string; call?: string };
        seen.push(c.call ?? c.endpoint!);
      },
    };
    const channel = tracingChannel(`openid-oauth-bridge:${name}`);
    channel.subscribe(handlers as never);
    return () => channel.unsubscribe(handlers as never);
  });
  closers.push(async () => unsubscribe.forEach((u) => u()));
  return seen;
}

/** Every cookie value the app set or received. */
function recordCookies(values: Set<string>) {
  return (app: Express) =>
    app.use((req, res, next) => {
      res.on('finish', () => {
        const set = [res.getHeader('set-cookie') ?? []].flat().map(String);
        const sent = (req.headers.cookie ?? '').split(';');
        for (const pair of [...set.map((c) => c.split(';')[0]!), ...sent]) {
          const value = pair.slice(pair.indexOf('=') + 1).trim();
          if (value.length >= 8) values.add(value).add(decodeURIComponent(value));
        }
      });
      next();
    });
}

const byName = (all: readonly SdkTrace.ReadableSpan[], name: string) => all.filter((s) => s.name === name);
const idOf = (s: SdkTrace.ReadableSpan) => s.spanContext().spanId;
const endpointOf = (s: SdkTrace.ReadableSpan) => s.attributes['oauth.endpoint'] ?? s.name;

suite(`OpenTelemetry spans${skipped}`, () => {
  it('makes one span per endpoint request and outbound call, the calls inside the login, and no secret anywhere', async () => {
    const cookies = new Set<string>();
    t = await createTestApp({}, recordCookies(cookies));
    mountClientEndpoints(t);
    await startTracing();
    const starts = countStarts();
    const { code } = await obtainCode(t);
    const tokens = (await exchangeCode(t, code)).body as { access_token: string; refresh_token: string };
    const refreshed = (await refreshWith(t, tokens.refresh_token)).body as {
      access_token: string;
      refresh_token: string;
    };
    expect((await callRealms(t, refreshed.access_token)).status).toBe(200);
    expect((await callRealms(t, 'not-a-token')).status).toBe(401);
    expect((await postAs(t, '/oauth/introspect', { token: refreshed.access_token })).body).toMatchObject({
      active: true,
    });
    expect((await postAs(t, '/oauth/revoke', { token: refreshed.refresh_token })).status).toBe(200);
    // Replayed last: a replayed code revokes what it gave.
    expect((await exchangeCode(t, code)).status).toBe(400);

    const all = await spans();
    // One span per request or call the channels saw, and nothing else.
    expect(all.map(endpointOf).sort()).toEqual([...starts].sort());
    expect(starts).toEqual(
      expect.arrayContaining([
        'authorization',
        'login',
        'login_callback',
        'token',
        'bearer',
        'introspection',
        'revocation',
        'openid_discovery',
        'openid_verification',
      ]),
    );

    const token = byName(all, 'POST /oauth/token');
    expect(token).toHaveLength(3);
    for (const span of token) {
      expect(span.kind).toBe(api.SpanKind.SERVER);
      expect(span.parentSpanContext).toBeUndefined();
    }
    expect(token.map((s) => s.attributes)).toEqual([
      {
        'oauth.endpoint': 'token',
        'http.request.method': 'POST',
        'http.route': '/oauth/token',
        'http.response.status_code': 200,
        'oauth.grant_type': 'authorization_code',
        'oauth.client.kind': 'confidential',
        'oauth.outcome': 'success',
      },
      expect.objectContaining({ 'oauth.grant_type': 'refresh_token', 'oauth.outcome': 'success' }),
      expect.objectContaining({
        'oauth.grant_type': 'authorization_code',
        'http.response.status_code': 400,
        'oauth.outcome': 'error',
        'error.type': 'invalid_grant',
      }),
    ]);
    // A refusal (4xx) is the client's error: the span's status stays unset (HTTP conventions).
    expect(token.map((s) => s.status.code)).toEqual([0, 0, 0].map(() => api.SpanStatusCode.UNSET));

    const bearer = byName(all, 'oauth bearer');
    expect(bearer.map((s) => [s.kind, s.attributes['oauth.outcome'], s.attributes['error.type']])).toEqual([
      [api.SpanKind.INTERNAL, 'success', undefined],
      [api.SpanKind.INTERNAL, 'error', 'invalid_token'],
    ]);
    expect(byName(all, 'GET /oauth/authorize')[0]!.attributes).toMatchObject({
      'oauth.endpoint': 'authorization',
    });

    // The calls to the provider: inside the login's requests, by the provider's configured name.
    const logins = new Map(
      all.filter((s) => String(s.attributes['oauth.endpoint']).startsWith('login')).map((s) => [idOf(s), s]),
    );
    const outbound = all.filter((s) => s.kind === api.SpanKind.CLIENT);
    expect(outbound.map((s) => s.name).sort()).toEqual([
      'openid_discovery',
      'openid_discovery',
      'openid_verification',
    ]);
    for (const span of outbound) {
      const parent = logins.get(span.parentSpanContext?.spanId ?? '');
      expect(parent, `${span.name} inside a login request`).toBeDefined();
      expect(span.spanContext().traceId).toBe(parent!.spanContext().traceId);
      expect(span.attributes).toEqual({
        'openid.provider': 'Development provider',
        'oauth.outcome': 'success',
      });
      expect(span.status.code).toBe(api.SpanStatusCode.UNSET);
    }
    const begin = outbound.find((s) => logins.get(s.parentSpanContext!.spanId)!.name === 'GET /oauth/login');
    expect(begin?.name).toBe('openid_discovery');

    // No secret the flow issued or used, no URL of the provider, no client id.
    const text = spansText(all);
    expect(cookies.size).toBeGreaterThan(0);
    const secrets = [
      code,
      tokens.access_token,
      tokens.refresh_token,
      refreshed.access_token,
      refreshed.refresh_token,
      t.codeClient.clientSecret,
      'a test session secret that is long enough',
      ...cookies,
    ];
    for (const secret of secrets) expect(text).not.toContain(secret);
    for (const named of [t.codeClient.clientId, t.provider.identifier, new URL(t.provider.identifier).host]) {
      expect(text).not.toContain(named);
    }
    expect(text).not.toMatch(/alice/i);
  });

  it('nests the spans of the host and of other instrumentations in the request, not in the host route after requireBearer', async () => {
    // As NodeSDK does: the AsyncLocalStorage context manager, and an HTTP server span around each
    // request (made here by a middleware, as the HTTP instrumentation would).
    t = await createTestApp({}, (app) =>
      app.use((req, res, next) => {
        const tracer = api.trace.getTracer('host');
        tracer.startActiveSpan(`HTTP ${req.method}`, { kind: api.SpanKind.SERVER }, (span) => {
          res.on('finish', () => span.end());
          next();
        });
      }),
    );
    await startTracing({ contextManager: true });
    let inEvent: string | undefined;
    t.server.events.on('token.issued', () => {
      inEvent = api.trace.getActiveSpan()?.spanContext().spanId;
      api.trace.getTracer('host').startActiveSpan('host work', (span) => span.end());
    });
    let inRoute: string | undefined;
    t.app.get('/v2/probe', requireBearer(t.server), (_req, res) => {
      inRoute = api.trace.getActiveSpan()?.spanContext().spanId;
      res.json({});
    });
    const { code } = await obtainCode(t);
    const tokens = (await exchangeCode(t, code)).body as { access_token: string };
    expect(
      (await t.agent.get('/v2/probe').set('authorization', `Bearer ${tokens.access_token}`)).status,
    ).toBe(200);

    const all = await spans();
    const [token] = byName(all, 'POST /oauth/token');
    const [http] = all.filter((s) => s.name === 'HTTP POST' && idOf(s) === token!.parentSpanContext?.spanId);
    // Inside the host's HTTP span, the library's is INTERNAL; the host's own work nests in it.
    expect(http).toBeDefined();
    expect(token!.kind).toBe(api.SpanKind.INTERNAL);
    expect(inEvent).toBe(idOf(token!));
    expect(byName(all, 'host work')[0]!.parentSpanContext?.spanId).toBe(idOf(token!));
    // The outbound calls nest in the login's spans through the host's context manager too.
    const login = byName(all, 'GET /oauth/login')[0]!;
    expect(byName(all, 'openid_discovery').map((s) => s.parentSpanContext?.spanId)).toContain(idOf(login));
    // The host's route runs in the host's HTTP span, not in the bearer check's.
    const bearer = byName(all, 'oauth bearer')[0]!;
    expect(inRoute).toBeDefined();
    expect(inRoute).toBe(bearer.parentSpanContext?.spanId);
  });

  it('traces a client metadata document fetch inside the authorization request, without its URL, and a failed one as an error', async () => {
    const docs: DocumentServer = await startDocumentServer();
    closers.push(() => docs.close());
    const clientId = `${docs.origin}/oauth/client.json`;
    docs.serve('/oauth/client.json', { json: clientDocument(clientId) });
    docs.serve('/oauth/gone.json', (_req, res) => void res.writeHead(404).end());
    t = await createTestApp({
      scopes: { realms: 'See your realms' },
      clientMetadataDocuments: { allowLoopbackOrigins: [docs.origin], ca: [docs.ca] },
    });
    await startTracing();
    await t.agent.get('/oauth/authorize').query(documentClientQuery(clientId));
    const gone = await t.agent
      .get('/oauth/authorize')
      .query(documentClientQuery(`${docs.origin}/oauth/gone.json`));
    expect(gone.status).toBe(400);

    const all = await spans();
    const authorize = byName(all, 'GET /oauth/authorize');
    const fetches = byName(all, 'client_document_fetch');
    expect(fetches).toHaveLength(2);
    expect(fetches.map((s) => s.parentSpanContext?.spanId)).toEqual(authorize.map(idOf));
    expect(fetches.map((s) => [s.kind, s.attributes, s.status.code])).toEqual([
      [api.SpanKind.CLIENT, { 'oauth.outcome': 'success' }, api.SpanStatusCode.UNSET],
      [api.SpanKind.CLIENT, { 'oauth.outcome': 'error', 'error.type': 'status' }, api.SpanStatusCode.ERROR],
    ]);
    expect(authorize[0]!.attributes['oauth.client.kind']).toBe('document');
    const text = spansText(all);
    expect(text).not.toContain(new URL(docs.origin).host);
    expect(text).not.toContain('client.json');
  });

  it('traces the Steam Web API read inside the login callback, by provider name, without the key', async () => {
    const KEY = 'SECRETSTEAMKEY0123456789ABCDEF00';
    const GORDON = '76561198000000042';
    const op = await startDevelopmentProvider({ shape: 'steam' });
    const webApi: RunningSteamWebApi = await startSteamWebApi({
      key: KEY,
      players: { [GORDON]: { personaname: 'Gordon' } },
    });
    closers.push(
      () => op.close(),
      () => webApi.close(),
    );
    const options: TestAppOptions = {
      providers: [steam({ baseUrl: op.url, webApi: { key: KEY, baseUrl: webApi.url } })],
    };
    t = await createTestApp(options);
    await startTracing();
    const consent = await authorizeWithLogin(
      t,
      { response_type: 'code', client_id: 'code-client', redirect_uri: CODE_REDIRECT, state: 's' },
      GORDON,
    );
    expect(consent.text).toContain('Gordon');

    const all = await spans();
    const [read] = byName(all, 'steam_web_api');
    const [callback] = byName(all, 'GET /oauth/login/callback');
    expect(read!.parentSpanContext?.spanId).toBe(idOf(callback!));
    expect(read!.attributes).toEqual({ 'openid.provider': 'Steam', 'oauth.outcome': 'success' });
    expect(callback!.attributes).toMatchObject({ 'openid.provider': 'Steam', 'oauth.outcome': 'success' });
    const text = spansText(all);
    for (const secret of [KEY, GORDON, new URL(webApi.url).host, new URL(op.url).host]) {
      expect(text).not.toContain(secret);
    }
  });

  it('marks a request the server failed (5xx) as an error span, without what was thrown', async () => {
    t = await createTestApp();
    await startTracing();
    t.storage.clients.find = () => Promise.reject(new Error('database down at postgres://user:pw@db/x'));
    const res = await refreshWith(t, 'any-refresh-token');
    expect(res.status).toBe(500);
    const [token] = await spans();
    expect(token!.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'server_error' });
    expect(token!.attributes).toMatchObject({ 'oauth.outcome': 'error', 'error.type': 'server_error' });
    expect(spansText([token!])).not.toMatch(/database|postgres|any-refresh-token/);
  });

  it('stops: no subscriber is left on any channel, and requests make no more spans', async () => {
    t = await createTestApp();
    await startTracing();
    expect(TRACE_NAMES.every((name) => traceChannel(name).hasSubscribers)).toBe(true);
    otel!.stop();
    otel!.stop();
    expect(TRACE_NAMES.filter((name) => traceChannel(name).hasSubscribers)).toEqual([]);
    await refreshWith(t, 'nothing');
    expect(await spans()).toEqual([]);
  });
});

suite(`OpenTelemetry figures through the global meter${skipped}`, () => {
  // A small list of its own: the server's figures list feeds the same sink.
  const requests: Figure = {
    kind: 'counter',
    prometheus: 'oauth_token_requests_total',
    otel: 'oauth.token.requests',
    help: 'Token requests by grant type and outcome.',
    labels: ['grant_type', 'outcome', 'error'],
  };
  const duration: Figure = {
    kind: 'histogram',
    prometheus: 'http_server_request_duration_seconds',
    otel: 'http.server.request.duration',
    help: 'Duration of the requests to each endpoint.',
    labels: ['endpoint', 'method', 'status'],
  };

  it('counts and observes by each figure’s OpenTelemetry name, with attributes named as the spans’', async () => {
    class Reader extends metricsSdk.MetricReader {
      protected override async onForceFlush() {}
      protected override async onShutdown() {}
    }
    const reader = new Reader();
    api.metrics.setGlobalMeterProvider(new metricsSdk.MeterProvider({ readers: [reader] }));
    otel = await openTelemetry({ traces: false });
    expect(TRACE_NAMES.filter((name) => traceChannel(name).hasSubscribers)).toEqual([]);
    const { figures } = otel;
    figures.count(requests, { grant_type: 'refresh_token', outcome: 'success' });
    figures.count(requests, { grant_type: 'refresh_token', outcome: 'success' }, 2);
    figures.count(requests, { grant_type: 'authorization_code', outcome: 'error', error: 'invalid_grant' });
    figures.observe(duration, { endpoint: 'token', method: 'POST', status: '200' }, 0.012);
    figures.observe(duration, { endpoint: 'token', method: 'POST', status: '200' }, 0.3);

    const { resourceMetrics, errors } = await reader.collect();
    expect(errors).toEqual([]);
    const [scope] = resourceMetrics.scopeMetrics;
    expect(scope!.scope.name).toBe('openid-oauth-bridge');
    const metric = (name: string) => scope!.metrics.find((m) => m.descriptor.name === name)!;

    const counter = metric('oauth.token.requests');
    expect(counter.descriptor).toMatchObject({ description: requests.help });
    expect(counter.dataPoints.map((p) => [p.attributes, p.value])).toEqual([
      [{ 'oauth.grant_type': 'refresh_token', 'oauth.outcome': 'success' }, 3],
      [
        { 'oauth.grant_type': 'authorization_code', 'oauth.outcome': 'error', 'error.type': 'invalid_grant' },
        1,
      ],
    ]);

    const histogram = metric('http.server.request.duration');
    expect(histogram.descriptor).toMatchObject({ unit: 's', description: duration.help });
    const [point] = histogram.dataPoints as SdkMetrics.DataPoint<SdkMetrics.Histogram>[];
    expect(point!.attributes).toEqual({
      'oauth.endpoint': 'token',
      'http.request.method': 'POST',
      'http.response.status_code': '200',
    });
    expect(point!.value).toMatchObject({ count: 2, sum: 0.312 });
    expect(point!.value.buckets.boundaries).toEqual([
      0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
    ]);
  });
});
