/**
 * The same figures reach OpenTelemetry's meter (issue 41): `openTelemetry({ server })` records the
 * server's figures on the global meter, and after a real flow each counter of the Prometheus
 * router has the same value as the meter's data point of the same name and attributes, read with
 * `@opentelemetry/sdk-metrics`'s reader in memory.
 *
 * The OpenTelemetry packages are devDependencies, loaded here only: without them this file says
 * so and is skipped.
 */
import { createRequire } from 'node:module';
import type * as Api from '@opentelemetry/api';
import type * as SdkMetrics from '@opentelemetry/sdk-metrics';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  FIGURES,
  metricsRouter,
  openTelemetry,
  type MetricsRouter,
  type OpenTelemetryInstrumentation,
} from '../../src/observability/index.js';
import { traceOutbound } from '../../src/observability/channels.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { exchangeCode, obtainCode, refreshWith } from '../support/flow.js';
import { samples } from '../support/prometheus-text.js';

const PACKAGES = ['@opentelemetry/api', '@opentelemetry/sdk-metrics'];
const missing = PACKAGES.filter((name) => {
  try {
    createRequire(import.meta.url).resolve(name);
    return false;
  } catch {
    return true;
  }
});
if (missing.length > 0) {
  console.warn(`SKIPPED ${import.meta.filename}: ${missing.join(', ')} not installed (devDependencies)`);
}
const suite = missing.length === 0 ? describe : describe.skip;

let api: typeof Api;
let metricsSdk: typeof SdkMetrics;
let t: TestApp | undefined;
let otel: OpenTelemetryInstrumentation | undefined;
let metrics: MetricsRouter | undefined;

beforeAll(async () => {
  if (missing.length > 0) return;
  api = await import('@opentelemetry/api');
  metricsSdk = await import('@opentelemetry/sdk-metrics');
});

afterEach(async () => {
  otel?.stop();
  metrics?.stop();
  otel = metrics = undefined;
  await t?.close();
  t = undefined;
  if (missing.length === 0) api.metrics.disable();
});

/** The attribute names `openTelemetry()`'s sink gives the figures' labels. */
const ATTRIBUTES: Record<string, string> = {
  error: 'error.type',
  provider: 'openid.provider',
  client_kind: 'oauth.client.kind',
};
const attributesOf = (labels: Record<string, string>) =>
  Object.fromEntries(Object.entries(labels).map(([k, v]) => [ATTRIBUTES[k] ?? `oauth.${k}`, v]));

suite(`the server's figures on OpenTelemetry's meter${missing.length ? ' (SKIPPED)' : ''}`, () => {
  it('are the Prometheus router’s, counter for counter, and stop with otel.stop()', async () => {
    class Reader extends metricsSdk.MetricReader {
      protected override async onForceFlush() {}
      protected override async onShutdown() {}
    }
    const reader = new Reader();
    api.metrics.setGlobalMeterProvider(new metricsSdk.MeterProvider({ readers: [reader] }));
    t = await createTestApp({ tokens: { rotateRefreshTokens: true } });
    otel = await openTelemetry({ server: t.server, traces: false });
    metrics = metricsRouter(t.server);
    t.app.use(metrics);

    const { code } = await obtainCode(t);
    const tokens = (await exchangeCode(t, code)).body as { refresh_token: string };
    expect((await refreshWith(t, tokens.refresh_token)).status).toBe(200);
    expect((await refreshWith(t, tokens.refresh_token)).status).toBe(400); // reused
    expect((await refreshWith(t, 'x', { client_secret: 'wrong' })).status).toBe(401);

    const text = (await t.agent.get('/metrics')).text;
    const { resourceMetrics, errors } = await reader.collect();
    expect(errors).toEqual([]);
    const [scope] = resourceMetrics.scopeMetrics;
    const metricNamed = (name: string) => scope!.metrics.find((m) => m.descriptor.name === name);

    const counters = Object.values(FIGURES).filter((f) => f.kind === 'counter');
    const compared = new Set<string>();
    for (const sample of samples(text)) {
      const figure = counters.find((f) => f.prometheus === sample.name);
      if (figure === undefined) continue;
      const points = metricNamed(figure.otel)?.dataPoints ?? [];
      const point = points.find(
        (p) => JSON.stringify(p.attributes) === JSON.stringify(attributesOf(sample.labels)),
      );
      expect(point?.value, `${sample.name} ${JSON.stringify(sample.labels)}`).toBe(sample.value);
      compared.add(figure.prometheus);
    }
    expect([...compared].sort()).toEqual(
      [
        'oauth_authorizations_total',
        'oauth_client_authentication_failures_total',
        'oauth_logins_total',
        'oauth_outbound_calls_total',
        'oauth_replays_detected_total',
        'oauth_token_requests_total',
      ].sort(),
    );

    // The duration histogram, under the HTTP semantic conventions' name: every token request.
    const duration = metricNamed('http.server.request.duration')!;
    expect(duration.descriptor.unit).toBe('s');
    const tokenPoints = (duration.dataPoints as SdkMetrics.DataPoint<SdkMetrics.Histogram>[]).filter(
      (p) => p.attributes['oauth.endpoint'] === 'token',
    );
    expect(tokenPoints.reduce((n, p) => n + p.value.count, 0)).toBe(4);

    // Stopped: the meter hears no more.
    otel.stop();
    expect((await refreshWith(t, 'y', { client_secret: 'wrong' })).status).toBe(401);
    const after = await reader.collect();
    const failures = after.resourceMetrics.scopeMetrics[0]!.metrics.find(
      (m) => m.descriptor.name === 'oauth.client.authentication_failures',
    )!;
    expect(failures.dataPoints.reduce((n, p) => n + (p.value as number), 0)).toBe(1);
  });

  it('counts a call to another server once, however many servers of the process record into the meter', async () => {
    class Reader extends metricsSdk.MetricReader {
      protected override async onForceFlush() {}
      protected override async onShutdown() {}
    }
    const reader = new Reader();
    api.metrics.setGlobalMeterProvider(new metricsSdk.MeterProvider({ readers: [reader] }));
    t = await createTestApp();
    const second = await createTestApp();
    const [first, other] = [
      await openTelemetry({ server: t.server, traces: false }),
      await openTelemetry({ server: second.server, traces: false }),
    ];
    try {
      await traceOutbound({ call: 'steam_web_api', provider: 'Steam' }, async () => 'answer');
      const { resourceMetrics } = await reader.collect();
      const calls = resourceMetrics.scopeMetrics[0]!.metrics.find(
        (m) => m.descriptor.name === 'oauth.outbound.calls',
      )!;
      expect(calls.dataPoints.map((p) => p.value)).toEqual([1]);
      // One server stopping leaves the other counting; both stopped, nothing is.
      first.stop();
      await traceOutbound({ call: 'steam_web_api', provider: 'Steam' }, async () => 'answer');
      other.stop();
      await traceOutbound({ call: 'steam_web_api', provider: 'Steam' }, async () => 'answer');
      const after = await reader.collect();
      const total = after.resourceMetrics.scopeMetrics[0]!.metrics.find(
        (m) => m.descriptor.name === 'oauth.outbound.calls',
      )!;
      expect(total.dataPoints.map((p) => p.value)).toEqual([2]);
    } finally {
      first.stop();
      other.stop();
      await second.close();
    }
  });
});
