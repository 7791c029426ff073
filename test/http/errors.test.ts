import { Strategy } from 'passport-strategy';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage, StorageUnavailableError, type ServerEvent } from '../../src/index.js';
import { ephemeralKeys } from '../../src/storage/keys.js';
import { createTestApp, recordingLogger, redirectParams, type TestApp } from '../support/app.js';
import { authorizeWithLogin, obtainCode, pathOf, signInAtProvider } from '../support/flow.js';

/**
 * One error presenter and one report: every 5xx, whatever failed (the storage, the session store,
 * the provider, a bug), emits exactly one `server.error` event of the same shape, logs once and
 * calls `onError` once; every error page has a way back.
 */
let t: TestApp;
afterEach(() => t.close());

const codeQuery = {
  response_type: 'code',
  client_id: 'code-client',
  redirect_uri: 'https://client.example/cb',
  state: 'xyz',
};

/** A strategy that throws: a bug in a host's login. */
class ThrowingStrategy extends Strategy {
  name = 'broken';
  override authenticate(): void {
    throw new Error('a bug in the strategy');
  }
}

/** A strategy whose provider does not answer, as the built-in one reports it. */
class UnreachableStrategy extends Strategy {
  name = 'unreachable';
  override authenticate(this: Strategy & { fail(challenge: unknown): void }): void {
    this.fail({ kind: 'provider_unreachable', message: 'The provider did not answer.' });
  }
}

async function recording(overrides: Parameters<typeof createTestApp>[0] = {}) {
  const events: ServerEvent[] = [];
  const hooked: number[] = [];
  const logger = recordingLogger();
  t = await createTestApp({
    ...(typeof overrides === 'function' ? {} : overrides),
    logger,
    onError: (_error, context) => void hooked.push(context.status),
  });
  t.server.events.on('server.error', (event) => void events.push(event));
  return { events, hooked, logger };
}

function expectOneReport(
  seen: Awaited<ReturnType<typeof recording>>,
  status: number,
  endpoint: string,
  requestId: string | undefined,
) {
  expect(seen.events).toEqual([
    {
      type: 'server.error',
      endpoint,
      status,
      requestId,
      error: expect.anything(),
      ip: expect.any(String),
      at: expect.any(Number),
    },
  ]);
  expect(seen.hooked).toEqual([status]);
  expect(seen.logger.lines).toHaveLength(1);
}

/** Memory storage whose ephemeral reads of the keys `affected` picks fail once `down` is set. */
function ephemeralOutage(affected: (key: string) => boolean) {
  const base = memoryStorage();
  const { ephemeral } = base;
  const outage = {
    down: false,
    storage: {
      ...base,
      ephemeral: {
        ...ephemeral,
        get: (key: string, now: number) =>
          outage.down && affected(key)
            ? Promise.reject(new StorageUnavailableError('down'))
            : ephemeral.get(key, now),
      },
    },
  };
  return outage;
}

describe('every 5xx is reported exactly once, with the same shape', () => {
  it('a storage outage at the token endpoint: 503 JSON, one report', async () => {
    const outage = ephemeralOutage(() => true);
    const seen = await recording({ storage: outage.storage });
    const { code } = await obtainCode(t);
    outage.down = true;
    const res = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
      redirect_uri: 'https://client.example/cb',
    });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('temporarily_unavailable');
    expectOneReport(seen, 503, 'token', res.headers['x-request-id']);
  });

  it('a session store that fails to load: 503 page, one report', async () => {
    const outage = ephemeralOutage((key) => key.startsWith(ephemeralKeys.session('')));
    const seen = await recording({ storage: outage.storage });
    await obtainCode(t);
    outage.down = true;
    const res = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(res.status).toBe(503);
    expect(res.headers.location).toBeUndefined();
    expectOneReport(seen, 503, 'authorization', res.headers['x-request-id']);
  });

  it('a provider that does not answer: 502 page, one report', async () => {
    const seen = await recording({ login: { strategy: new UnreachableStrategy() } });
    await t.agent.get('/oauth/authorize').query(codeQuery);
    const res = await t.agent.get('/oauth/login').query({ openid_identifier: t.provider.identifier });
    expect(res.status).toBe(502);
    expect(res.text).toContain('The provider did not answer.');
    // Reported under the endpoint's own name, not as 'authorization' (issue 37).
    expectOneReport(seen, 502, 'login', res.headers['x-request-id']);
  });

  it('a bug in the login strategy: 500 page that shows nothing of it, one report', async () => {
    const seen = await recording({ login: { strategy: new ThrowingStrategy() } });
    await t.agent.get('/oauth/authorize').query(codeQuery);
    const res = await t.agent.get('/oauth/login').query({ openid_identifier: t.provider.identifier });
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('a bug in the strategy');
    expectOneReport(seen, 500, 'login', res.headers['x-request-id']);
  });
});

/** The href of the link with this text on a page. */
function linkTo(html: string, text: string): string | undefined {
  const match = new RegExp(`<a href="([^"]+)">${text}</a>`).exec(html);
  return match?.[1]?.replace(/&amp;/g, '&');
}

describe('an error while showing an error', () => {
  it("a host's error page that throws: a bare 500, and the server keeps answering", async () => {
    const seen = await recording({
      pages: {
        error: () => {
          throw new Error('the renderer broke');
        },
      },
    });
    const res = await supertest(t.baseUrl).get('/oauth/authorize').query({ client_id: 'nobody' });
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('the renderer broke');
    expect(seen.events).toEqual([]);
    expect((await supertest(t.baseUrl).get('/')).status).toBe(200);
  });
});

describe('every error page has a way back', () => {
  it('to the client, with the error, once its redirect URI is verified', async () => {
    const storage = memoryStorage();
    let down = false;
    const { ephemeral } = storage;
    // The code's write fails: the client and its redirect URI were read and verified before it.
    t = await createTestApp({
      storage: {
        ...storage,
        ephemeral: {
          ...ephemeral,
          set: (key, value, expiresAt, now) =>
            down && key.startsWith('code:')
              ? Promise.reject(new StorageUnavailableError('down'))
              : ephemeral.set(key, value, expiresAt, now),
        },
      },
    });
    await obtainCode(t);
    down = true;
    const res = await t.agent.get('/oauth/authorize').query(codeQuery);
    expect(res.status).toBe(503);
    const back = linkTo(res.text, 'Return to the application');
    expect(back).toBeDefined();
    expect(back!.startsWith('https://client.example/cb?')).toBe(true);
    expect(redirectParams(back!)).toMatchObject({
      error: 'temporarily_unavailable',
      state: 'xyz',
      iss: t.baseUrl,
    });
  });

  it('never to an unverified redirect URI: a link to start again on the site', async () => {
    t = await createTestApp();
    const res = await supertest(t.baseUrl)
      .get('/oauth/authorize')
      .query({ ...codeQuery, redirect_uri: 'https://evil.example/cb' });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('evil.example');
    expect(linkTo(res.text, 'Start again')).toBe(`${t.baseUrl}/`);
  });

  it('to the sign-in in progress when there is one', async () => {
    t = await createTestApp();
    await t.agent.get('/oauth/authorize').query(codeQuery);
    const res = await t.agent.post('/oauth/authorize/decision').type('form').send({ decision: 'allow' });
    expect(res.status).toBe(400);
    expect(linkTo(res.text, 'Start again')).toBe(`${t.baseUrl}/oauth/authorize/resume`);
  });
});

describe('a failed sign-in from the authorized-applications page', () => {
  it('leads back to that page and to its own sign-in, not to an authorization that is not there', async () => {
    await recording({ login: { strategy: new UnreachableStrategy() } });
    const res = await t.agent
      .get('/oauth/login')
      .query({ openid_identifier: t.provider.identifier, for: 'applications' });
    expect(res.status).toBe(502);
    const retry = linkTo(res.text, 'Try again')!;
    expect(retry).toContain('for=applications');
    const again = await t.agent.get(pathOf(retry));
    expect(again.status).toBe(502); // the provider still does not answer: no "no sign-in in progress"
    expect(again.text).not.toContain('no sign-in in progress');
  });
});

describe('the pending request is bound to the login that completes it', () => {
  it('a request swapped in while the login was pending gets no code', async () => {
    t = await createTestApp();
    // The user starts signing in for the photo printer …
    const first = await t.agent.get('/oauth/authorize').query({ ...codeQuery, scope: 'realms' });
    expect(first.status).toBe(200);
    const toProvider = await t.agent.get('/oauth/login').query({ openid_identifier: t.provider.identifier });
    expect(toProvider.status).toBe(302);
    // … while another request (a forged link, another tab) replaces the pending one …
    const swapped = await t.agent
      .get('/oauth/authorize')
      .query({ ...codeQuery, scope: 'profile', state: 'swapped' });
    expect(swapped.status).toBe(200);
    // … and the provider's answer to the first login arrives.
    const callback = await signInAtProvider(toProvider.headers.location!, 'alice');
    const res = await t.agent.get(pathOf(callback));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('Another sign-in was started');
    const grants = await t.storage.grants.list({ clientId: 'code-client' });
    expect(grants).toEqual([]);
  });

  it('the login started for the request completes it', async () => {
    t = await createTestApp();
    const consent = await authorizeWithLogin(t, codeQuery);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Photo Printer');
  });
});
