/**
 * The outbound calls' tracing channels (issue 41), with no dependency: a `diagnostics_channel`
 * subscriber sees each call to another server start and end, with the provider's configured name
 * and, when it failed, a word for why; never its URL, the error's message or what it answered.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { subscribe as subscribeTo, type Seen } from '../support/channels.js';
import { FetchRefusedError } from '../../src/net/bounded-fetch.js';
import { OpenIdLoginError } from '../../src/login/openid/errors.js';
import { traceOutbound } from '../../src/observability/channels.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { pathOf } from '../support/flow.js';

let t: TestApp | undefined;
const stops: (() => void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await t?.close();
  t = undefined;
});

function subscribe(name: string): Seen[] {
  const { seen, stop } = subscribeTo(name);
  stops.push(stop);
  return seen;
}

describe('the outbound calls on their tracing channels', () => {
  it('traces a discovery that could not reach the provider: its name, `network`, never its URL', async () => {
    const identifier = 'http://127.0.0.1:1/openid/secret-path';
    t = await createTestApp({ providers: [{ name: 'Down', identifier }] });
    const seen = subscribe('openid_discovery');
    const start = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: 'https://client.example/cb',
    });
    const href = /<a href="([^"]+)">/.exec(start.text)![1]!.replaceAll('&amp;', '&');
    const login = await t.agent.get(pathOf(href));
    expect(login.status).toBeGreaterThanOrEqual(400);

    expect(seen.map((s) => s.event)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(seen.at(-1)!.context).toMatchObject({
      call: 'openid_discovery',
      provider: 'Down',
      outcome: 'error',
      reason: 'network',
    });
    expect((seen.at(-1)!.context.error as Error).message).toBe('openid_discovery failed: network');
    expect(JSON.stringify(seen)).not.toContain('secret-path');
  });

  it('gives the caller what a call resolved with when `failed` calls it a failure', async () => {
    const seen = subscribe('client_document_fetch');
    const answer = { status: 404 };
    const got = await traceOutbound(
      { call: 'client_document_fetch' },
      async () => answer,
      (a) => (a.status === 200 ? undefined : 'status'),
    );
    expect(got).toBe(answer);
    expect(seen.map((s) => s.event)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(seen.at(-1)!.context).toMatchObject({ outcome: 'error', reason: 'status' });
  });

  it.each([
    [
      'a deadline, under the login error',
      new OpenIdLoginError('provider_unreachable', 'x', {
        cause: new FetchRefusedError('timeout', new URL('https://op.example/'), 'slow'),
      }),
      'timeout',
    ],
    ['an answer that does not verify', new OpenIdLoginError('invalid_response', 'x'), 'invalid'],
    ['a status', new FetchRefusedError('bad_status', new URL('https://op.example/'), '500'), 'status'],
    [
      'an address not called',
      new FetchRefusedError('address', new URL('https://op.example/'), 'private'),
      'refused',
    ],
    ['a socket error', Object.assign(new Error('connect'), { code: 'ECONNRESET' }), 'network'],
    ['anything else, its message unsaid', new Error('token=secret-value'), 'failed'],
  ])('says why in a word: %s', async (_what, thrown, reason) => {
    const seen = subscribe('openid_verification');
    await expect(
      traceOutbound({ call: 'openid_verification', provider: 'P' }, () => Promise.reject(thrown)),
    ).rejects.toBe(thrown);
    expect(seen.at(-1)!.context).toMatchObject({ outcome: 'error', reason });
    expect(
      JSON.stringify(seen.map((s) => [s.context, (s.context.error as Error | undefined)?.message])),
    ).not.toContain('secret-value');
  });

  it('with no subscriber, runs the call and publishes nothing', async () => {
    const trace = { call: 'steam_web_api' as const, provider: 'Steam' };
    expect(await traceOutbound(trace, async () => 7)).toBe(7);
    expect(trace).toEqual({ call: 'steam_web_api', provider: 'Steam' });
  });
});
