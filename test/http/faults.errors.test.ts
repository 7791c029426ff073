/**
 * How failures reach clients, logs and the host's hook, whatever the adapter: a storage outage
 * (StorageUnavailableError, which a custom adapter throws too) is 503 with Retry-After; anything
 * unknown is a 500 server_error without internals, logged once and passed to `onError` once, with
 * the request id the response carries.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { ErrorContext } from '../../src/config/types.js';
import { memoryStorage, StorageUnavailableError, type Storage } from '../../src/index.js';
import { sqlOutageRetryAfter } from '../../src/storage/sql/faults.js';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  api,
  authorizePage,
  exchange,
  expectApiUnavailable,
  expectPageUnavailable,
  expectTokenUnavailable,
  seedCode,
  seedTokens,
  timedFetch,
} from '../support/faults.js';
import { authorizeWithLogin } from '../support/flow.js';

interface Recorded {
  errors: { message: string; details: Record<string, unknown> | undefined }[];
  warnings: { message: string; details: Record<string, unknown> | undefined }[];
  hooked: { error: unknown; context: ErrorContext }[];
}

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function appWith(storage: Storage, onError?: (error: unknown, context: ErrorContext) => void) {
  const recorded: Recorded = { errors: [], warnings: [], hooked: [] };
  t = await createTestApp({
    storage,
    logger: {
      warn: (message, details) => recorded.warnings.push({ message, details }),
      error: (message, details) => recorded.errors.push({ message, details }),
    },
    onError:
      onError ??
      ((error, context) => {
        recorded.hooked.push({ error, context });
      }),
  });
  return { t, recorded };
}

const outage = () => new StorageUnavailableError('cache cluster down', { retryAfterSeconds: 7 });

describe('a custom adapter throwing StorageUnavailableError', () => {
  it('token endpoint: 503 temporarily_unavailable with its Retry-After, and nothing issued', async () => {
    const storage = memoryStorage();
    const { t } = await appWith(storage);
    const code = await seedCode(t);
    storage.tokens.saveAll = async () => {
      throw outage();
    };
    const answer = await exchange(t, code);
    expectTokenUnavailable(answer, 2000);
    expect(answer.res.headers.get('retry-after')).toBe('7');
  });

  it('requireBearer: 503 with Retry-After and no challenge, never 401', async () => {
    const storage = memoryStorage();
    const { t, recorded } = await appWith(storage);
    const { accessToken } = await seedTokens(t);
    storage.tokens.find = async () => {
      throw outage();
    };
    const answer = await api(t, accessToken);
    expectApiUnavailable(answer, 2000);
    expect(answer.text).not.toContain('invalid_token');
    // An outage is a warning, not an error, and reaches the hook with status 503.
    expect(recorded.errors).toHaveLength(0);
    expect(recorded.warnings).toHaveLength(1);
    expect(recorded.hooked).toHaveLength(1);
    expect(recorded.hooked[0]!.context).toMatchObject({ status: 503, route: 'GET /v1/realms' });
  });

  it('authorization endpoint: a 503 page whose "Try again" repeats the request', async () => {
    const storage = memoryStorage();
    const { t } = await appWith(storage);
    storage.clients.find = async () => {
      throw outage();
    };
    const answer = await authorizePage(t);
    expectPageUnavailable(answer, 2000);
    const retry = /<a href="([^"]+)">Try again<\/a>/.exec(answer.text)![1]!.replaceAll('&amp;', '&');
    expect(new URL(retry).pathname).toBe('/oauth/authorize');
    expect(new URL(retry).searchParams.get('state')).toBe('fault');
  });

  it('authorization endpoint: no redirect to the client even once its redirect URI is verified', async () => {
    const storage = memoryStorage();
    const { t } = await appWith(storage);
    const set = storage.ephemeral.set;
    storage.ephemeral.set = async (key, ...rest) => {
      if (key.startsWith('code:')) throw outage();
      return set(key, ...rest);
    };
    const res = await authorizeWithLogin(t, {
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: 'https://client.example/cb',
      state: 's',
    });
    // The consent page first: the login and the client were fine.
    expect(res.status).toBe(200);
    const form = /name="transaction" value="([^"]+)"[\s\S]*?name="csrf" value="([^"]+)"/.exec(res.text)!;
    const decided = await t.agent
      .post('/oauth/authorize/decision')
      .type('form')
      .set('Origin', t.baseUrl)
      .send({ transaction: form[1]!, csrf: form[2]!, decision: 'allow' });
    expect(decided.status).toBe(503);
    expect(decided.headers.location).toBeUndefined();
    expect(decided.text).toContain('Temporarily unavailable');
    expect(decided.text).toContain('/oauth/authorize/resume');
  });
});

describe('an unknown error', () => {
  it('is a 500 server_error without internals, logged once and hooked once with the request id', async () => {
    const storage = memoryStorage();
    const { t, recorded } = await appWith(storage);
    const code = await seedCode(t);
    const get = storage.ephemeral.get;
    storage.ephemeral.get = async (key, now) => {
      if (key.startsWith('code:')) throw new Error('db-internal-detail: relation "oauth_codes" is corrupt');
      return get(key, now);
    };
    const answer = await exchange(t, code);
    expect(answer.res.status).toBe(500);
    expect(JSON.parse(answer.text)).toEqual({
      error: 'server_error',
      error_description: 'The server met an unexpected condition.',
    });
    expect(answer.text).not.toContain('db-internal-detail');
    const requestId = answer.res.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);

    expect(recorded.errors).toHaveLength(1);
    expect(recorded.warnings).toHaveLength(0);
    expect(recorded.errors[0]!.details).toMatchObject({ requestId, route: 'POST /oauth/token' });
    expect(recorded.hooked).toHaveLength(1);
    expect(recorded.hooked[0]!.context).toEqual({ requestId, route: 'POST /oauth/token', status: 500 });
    expect((recorded.hooked[0]!.error as Error).message).toContain('db-internal-detail');
    // No credential of the request reaches the log.
    const logged = inspect(recorded.errors, { depth: 10 });
    expect(logged).not.toContain(code);
    expect(logged).not.toContain(t.codeClient.clientSecret);
  });

  it('keeps answering when the onError hook itself throws', async () => {
    const storage = memoryStorage();
    const { t, recorded } = await appWith(storage, () => {
      throw new Error('tracker offline');
    });
    const { accessToken } = await seedTokens(t);
    storage.tokens.find = async () => {
      throw new Error('boom');
    };
    const answer = await api(t, accessToken);
    expect(answer.res.status).toBe(500);
    expect(recorded.errors.map((e) => e.message)).toEqual(['internal error', 'the onError hook threw']);
  });
});

describe('X-Request-Id', () => {
  it('honours a sane incoming id, replaces anything else, and is sent on success too', async () => {
    const { t } = await appWith(memoryStorage());
    const code = await seedCode(t);
    const sent = await timedFetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'x-request-id': 'lb-7f3a.42:trace=1' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'https://client.example/cb',
        client_id: t.codeClient.clientId,
        client_secret: t.codeClient.clientSecret,
      }),
    });
    expect(sent.res.status).toBe(200);
    expect(sent.res.headers.get('x-request-id')).toBe('lb-7f3a.42:trace=1');

    for (const insane of ['a b', 'x'.repeat(129), '<script>', '-leading-dash']) {
      const page = await timedFetch(`${t.baseUrl}/oauth/authorize`, { headers: { 'x-request-id': insane } });
      expect(page.res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('which driver errors are outages', () => {
  const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code });
  it.each([
    ['57P01 admin_shutdown', pgError('57P01'), 5],
    ['57P03 cannot_connect_now', pgError('57P03'), 5],
    ['57014 statement_timeout', pgError('57014'), 1],
    ['55P03 lock_timeout', pgError('55P03'), 1],
    ['53300 too_many_connections', pgError('53300'), 5],
    ['08006 connection_failure', pgError('08006'), 5],
    ['40001 serialization_failure', pgError('40001'), 1],
    ['ECONNREFUSED', pgError('ECONNREFUSED'), 5],
    ['pool connect timeout', new Error('timeout exceeded when trying to connect'), 5],
    ['connection died', new Error('Connection terminated unexpectedly'), 5],
    ['AggregateError of connects', new AggregateError([pgError('ECONNREFUSED')], 'connect failed'), 5],
    ['wrapped in a cause', new Error('migration failed', { cause: pgError('57P01') }), 5],
    ['SQLITE_BUSY', pgError('SQLITE_BUSY'), 1],
    ['SQLITE_BUSY_SNAPSHOT', pgError('SQLITE_BUSY_SNAPSHOT'), 1],
    ['SQLITE_IOERR_WRITE', pgError('SQLITE_IOERR_WRITE'), 5],
  ])('%s: an outage', (_name, error, retryAfter) => {
    expect(sqlOutageRetryAfter(error)).toBe(retryAfter);
  });

  it.each([
    ['23505 unique_violation', pgError('23505')],
    ['42P01 undefined_table', pgError('42P01')],
    ['22P02 invalid_text_representation', pgError('22P02')],
    ['SQLITE_CONSTRAINT_UNIQUE', pgError('SQLITE_CONSTRAINT_UNIQUE')],
    ['SQLITE_ERROR', pgError('SQLITE_ERROR')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error', 'string'],
  ])('%s: a bug, not an outage', (_name, error) => {
    expect(sqlOutageRetryAfter(error)).toBeUndefined();
  });

  it('recognises the error by its brand, not by its name', () => {
    expect(StorageUnavailableError.is(new StorageUnavailableError())).toBe(true);
    expect(
      StorageUnavailableError.is(Object.assign(new Error('x'), { name: 'StorageUnavailableError' })),
    ).toBe(false);
  });
});
