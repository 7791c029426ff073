/**
 * The Prometheus router (issue 41): after real flows (a code flow with a login at the development
 * OpenID 2.0 provider, a refresh, a replayed refresh token, a wrong client secret, a request over
 * the rate limit) its counters equal the events the server emitted, `promtool check metrics`
 * accepts its text, and no label value holds a token, code, secret or client id the test used.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  memoryStorage,
  StorageUnavailableError,
  type ServerEvent,
  type ServerEventOf,
  type Storage,
} from '../../src/index.js';
import { metricsRouter, type MetricsRouter } from '../../src/observability/index.js';
import { createTestApp, IMPLICIT_REDIRECT, type TestApp } from '../support/app.js';
import { recordEvents } from '../support/endpoints.js';
import {
  answerConsent,
  exchangeCode,
  obtainCode,
  obtainTokens,
  pathOf,
  refreshWith,
  signInAtProvider,
} from '../support/flow.js';
import { samples, valueOf } from '../support/prometheus-text.js';
import { checkMetrics, promtoolAvailability } from '../support/promtool.js';

let t: TestApp | undefined;
let metrics: MetricsRouter | undefined;
afterEach(async () => {
  metrics?.stop();
  metrics = undefined;
  await t?.close();
  t = undefined;
});

/** The code client's app, rotating refresh tokens, a client refused after 2 failures, and /metrics. */
async function appWithMetrics(storage?: Storage): Promise<{ t: TestApp; events: ServerEvent[] }> {
  t = await createTestApp({
    tokens: { rotateRefreshTokens: true },
    rateLimit: { maxFailuresPerClient: 2 },
    ...(storage === undefined ? {} : { storage }),
  });
  metrics = metricsRouter(t.server);
  t.app.use(metrics);
  return { t, events: recordEvents(t) };
}

const ofType = <T extends ServerEvent['type']>(events: readonly ServerEvent[], type: T) =>
  events.filter((e): e is ServerEventOf<T> => e.type === type);

const availability = promtoolAvailability();

describe('the Prometheus router after real flows', () => {
  it('counts what the events say, in a text promtool accepts, with no secret in any label', async () => {
    const { t, events } = await appWithMetrics();
    const { code } = await obtainCode(t);
    const tokens = (await exchangeCode(t, code)).body as { access_token: string; refresh_token: string };
    const refreshed = await refreshWith(t, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    const rotated = (refreshed.body as { refresh_token: string }).refresh_token;
    // The replaced refresh token again: reuse detected, the grant revoked.
    expect((await refreshWith(t, tokens.refresh_token)).status).toBe(400);
    // A wrong secret twice (401), then the client is over its limit (429).
    const wrong = { client_secret: 'not-the-secret' };
    expect((await refreshWith(t, rotated, wrong)).status).toBe(401);
    expect((await refreshWith(t, rotated, wrong)).status).toBe(401);
    expect((await refreshWith(t, rotated, wrong)).status).toBe(429);

    const res = await t.agent.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = res.text;

    // Counters equal the events.
    const issued = ofType(events, 'token.issued');
    expect(issued).toHaveLength(1);
    expect(
      valueOf(text, 'oauth_token_requests_total', { grant_type: 'authorization_code', outcome: 'success' }),
    ).toBe(issued.length);
    expect(
      valueOf(text, 'oauth_token_requests_total', { grant_type: 'refresh_token', outcome: 'success' }),
    ).toBe(ofType(events, 'token.refreshed').length);
    expect(valueOf(text, 'oauth_token_requests_total', { error: 'invalid_grant' })).toBe(1);
    expect(valueOf(text, 'oauth_token_requests_total', { error: 'invalid_client' })).toBe(2);
    expect(valueOf(text, 'oauth_token_requests_total', { error: 'temporarily_unavailable' })).toBe(1);
    expect(valueOf(text, 'oauth_token_requests_total')).toBe(6);
    expect(valueOf(text, 'oauth_authorizations_total', { outcome: 'code_issued' })).toBe(
      ofType(events, 'code.issued').length,
    );
    expect(
      valueOf(text, 'oauth_logins_total', { provider: 'Development provider', outcome: 'success' }),
    ).toBe(ofType(events, 'login.succeeded').length);
    expect(ofType(events, 'refresh_token.reused')).toHaveLength(1);
    expect(valueOf(text, 'oauth_replays_detected_total', { grant_type: 'refresh_token' })).toBe(1);
    const failures = ofType(events, 'client.authentication_failed');
    // The third wrong secret is a failure too, counted before the limit refuses it.
    expect(failures).toHaveLength(3);
    expect(failures[0]).toMatchObject({ clientKind: 'confidential' });
    expect(
      valueOf(text, 'oauth_client_authentication_failures_total', {
        endpoint: 'token',
        client_kind: 'confidential',
      }),
    ).toBe(failures.length);
    const limited = ofType(events, 'rate_limit.exceeded');
    expect(limited).toEqual([expect.objectContaining({ limit: 'client_authentication', per: 'client' })]);
    expect(valueOf(text, 'oauth_rate_limited_requests_total', { limit: 'client_authentication' })).toBe(1);
    // Every token request timed: the histogram's count per endpoint.
    expect(valueOf(text, 'oauth_request_duration_seconds_count', { endpoint: 'token' })).toBe(6);
    expect(valueOf(text, 'oauth_request_duration_seconds_bucket', { endpoint: 'token', le: '+Inf' })).toBe(6);

    // No secret, token, code or client id in any label value (nor anywhere in the text).
    const values = samples(text).flatMap((s) => Object.values(s.labels));
    for (const secret of [
      code,
      tokens.access_token,
      tokens.refresh_token,
      rotated,
      t.codeClient.clientSecret,
      t.codeClient.clientId,
      'not-the-secret',
    ]) {
      expect(values.filter((v) => v.includes(secret))).toEqual([]);
      expect(text).not.toContain(secret);
    }

    if (availability.ok) {
      const checked = checkMetrics(text);
      expect(checked.output).toBe('');
      expect(checked.status).toBe(0);
    }
  });

  it('counts the codes and implicit tokens issued from the traces, listening to no event that busy paths build', async () => {
    t = await createTestApp();
    const busy = ['code.issued', 'token.issued', 'token.refreshed'] as const;
    const before = busy.map((type) => t!.server.events.listenerCount(type));
    metrics = metricsRouter(t.server);
    t.app.use(metrics);
    // The figures listen to none of them: a code or a token issued builds no event for them (its
    // address, its request id); the authorization's trace says what it issued.
    expect(busy.map((type) => t!.server.events.listenerCount(type))).toEqual(before);
    expect(t.server.events.listenerCount('code.issued')).toBe(0);
    const { code } = await obtainCode(t);
    expect((await exchangeCode(t, code)).status).toBe(200);
    await obtainCode(t);
    // Signed in already: the implicit client's consent page at once.
    const consent = await t.agent.get('/oauth/authorize').query({
      response_type: 'token',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
      state: 's',
    });
    expect(consent.status).toBe(200);
    const location = (await answerConsent(t, consent.text, 'allow')).headers.location!;
    expect(location).toContain('#access_token=');
    const text = (await t.agent.get('/metrics')).text;
    expect(valueOf(text, 'oauth_authorizations_total', { outcome: 'code_issued' })).toBe(2);
    expect(valueOf(text, 'oauth_authorizations_total', { outcome: 'token_issued' })).toBe(1);
    expect(
      valueOf(text, 'oauth_token_requests_total', { grant_type: 'authorization_code', outcome: 'success' }),
    ).toBe(1);
  });

  it('counts a login cancelled at the provider, and a storage outage behind requireBearer', async () => {
    const base = memoryStorage();
    let down = false;
    const storage: Storage = {
      ...base,
      tokens: {
        ...base.tokens,
        find: (hash) => (down ? Promise.reject(new StorageUnavailableError()) : base.tokens.find(hash)),
      },
    };
    const { t, events } = await appWithMetrics(storage);
    const begin = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: 'https://client.example/cb',
      opIdentifier: t.provider.identifier,
    });
    const toProvider = await t.agent.get(pathOf(begin.headers.location!));
    const callback = await signInAtProvider(toProvider.headers.location!, 'alice', 'cancel');
    expect((await t.agent.get(pathOf(callback))).status).toBe(400);
    const tokens = await obtainTokens(t);
    down = true;
    const outage = await t.agent.get('/v1/realms').set('Authorization', `Bearer ${tokens.access_token}`);
    expect(outage.status).toBe(503);

    const text = (await t.agent.get('/metrics')).text;
    const failed = ofType(events, 'login.failed');
    expect(failed).toEqual([
      expect.objectContaining({ provider: 'Development provider', outcome: 'failed' }),
    ]);
    expect(valueOf(text, 'oauth_logins_total', { provider: 'Development provider', outcome: 'failed' })).toBe(
      1,
    );
    expect(valueOf(text, 'oauth_logins_total', { outcome: 'success' })).toBe(
      ofType(events, 'login.succeeded').length,
    );
    const outages = ofType(events, 'server.error').filter((e) => e.status === 503);
    expect(outages).toHaveLength(1);
    expect(valueOf(text, 'oauth_storage_unavailable_total', { endpoint: 'bearer' })).toBe(1);
    expect(
      valueOf(text, 'oauth_request_duration_seconds_count', { endpoint: 'bearer', outcome: 'error' }),
    ).toBe(1);
  });

  it.runIf(availability.ok)('promtool refuses a text that is not the format (the check can fail)', () => {
    expect(checkMetrics('oauth_token_requests_total{grant_type="x} 1\n').status).not.toBe(0);
  });
});
