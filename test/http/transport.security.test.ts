import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import type supertest from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CODE_REDIRECT,
  createTestApp,
  recordingLogger,
  redirectParams,
  type TestApp,
} from '../support/app.js';
import {
  answerConsent,
  authorizeWithLogin,
  basicAuth,
  exchangeCode,
  obtainCode,
  parseForm,
  pathOf,
  refreshWith,
} from '../support/flow.js';

// Also proven elsewhere: an oversized token request body gets 413 (token.endpoint.test.ts); the
// token response carries Cache-Control: no-store and Pragma: no-cache (flow.authorization-code.test.ts).

let t: TestApp;
afterEach(() => {
  vi.restoreAllMocks();
  return t.close();
});

const codeQuery = {
  response_type: 'code',
  client_id: 'code-client',
  redirect_uri: CODE_REDIRECT,
  state: 's',
};

function expectNoStore(res: supertest.Response) {
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers.pragma).toBe('no-cache');
}

describe('transport: bounded bodies and parameter counts', () => {
  it('token endpoint: 413 past 8 KiB or 20 parameters, before the code is touched', async () => {
    t = await createTestApp();
    const { code } = await obtainCode(t);
    const fields = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CODE_REDIRECT,
      client_id: 'code-client',
      client_secret: t.codeClient.clientSecret,
    };
    const padding = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, 'x']));
    const oversized = await t.agent
      .post('/oauth/token')
      .type('form')
      .send({ ...fields, pad: 'x'.repeat(9000) });
    const tooMany = await t.agent
      .post('/oauth/token')
      .type('form')
      .send({ ...fields, ...padding(16) });
    for (const res of [oversized, tooMany]) {
      expect(res.status).toBe(413);
      expect(res.body.error).toBe('invalid_request');
      expectNoStore(res);
    }
    // 20 parameters are still fine.
    const { code: second } = await obtainCode(t);
    expect((await exchangeCode(t, second, padding(15))).status).toBe(200);
    expect((await exchangeCode(t, code)).status).toBe(200);
  });

  it('consent form: 413 page past 4 KiB or 10 parameters; the genuine form still works', async () => {
    t = await createTestApp();
    const consent = await authorizeWithLogin(t, codeQuery);
    const form = parseForm(consent.text);
    const post = (fields: Record<string, string>) =>
      t.agent.post(pathOf(form.action)).type('form').send(fields);
    const pad = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`p${i}`, 'x']));
    for (const res of [
      await post({ ...form.fields, decision: 'allow', pad: 'x'.repeat(5000) }),
      await post({ ...form.fields, decision: 'allow', ...pad }),
    ]) {
      expect(res.status).toBe(413);
      expect(res.type).toBe('text/html');
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['cache-control']).toBe('no-store');
    }
    expect((await answerConsent(t, consent.text, 'allow')).status).toBe(303);
  });

  it('authorization endpoint: more than 32 parameters is a 400 page, never a redirect', async () => {
    t = await createTestApp();
    const extra = Array.from({ length: 30 }, (_, i) => `p${i}=x`).join('&');
    const res = await t.agent.get(
      `/oauth/authorize?response_type=code&client_id=code-client&redirect_uri=${encodeURIComponent(CODE_REDIRECT)}&${extra}`,
    );
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('Too many parameters.');
  });
});

describe('transport: no-store on every token endpoint response', () => {
  it('success, every error, the rate limit and a wrong method', async () => {
    t = await createTestApp({ rateLimit: { maxFailuresPerClient: 1 } });
    const { code } = await obtainCode(t);
    const responses = [
      await exchangeCode(t, code),
      await exchangeCode(t, code),
      await exchangeCode(t, 'nope', { grant_type: 'password' }),
      await t.agent.post('/oauth/token').send({ grant_type: 'authorization_code' }),
      await t.agent.get('/oauth/token'),
      await exchangeCode(t, 'nope', { client_secret: 'wrong' }),
      await exchangeCode(t, 'nope', { client_secret: 'wrong' }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 400, 400, 400, 400, 401, 429]);
    responses.forEach(expectNoStore);
  });
});

describe('transport: nothing secret in a log line or an error description', () => {
  it('holds across a full flow with its error paths', async () => {
    const logger = recordingLogger();
    const consoleLines: string[] = [];
    for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      vi.spyOn(console, level).mockImplementation(
        (...args: unknown[]) => void consoleLines.push(inspect(args, { depth: 10 })),
      );
    }
    t = await createTestApp({
      logger,
      tokens: { rotateRefreshTokens: true },
      rateLimit: { maxFailuresPerClient: 3 },
    });
    const secrets = new Set<string>([t.codeClient.clientSecret]);
    const responses: supertest.Response[] = [];
    const keep = async (pending: supertest.Test | Promise<supertest.Response>) => {
      const res = await pending;
      responses.push(res);
      for (const cookie of res.headers['set-cookie'] ?? []) secrets.add(cookie.split(';')[0]!.split('=')[1]!);
      for (const key of ['access_token', 'refresh_token'] as const)
        if (res.body?.[key]) secrets.add(res.body[key]);
      return res;
    };
    /** A logged-in browser whose grant was revoked: the consent page, allowed; resolves the code. */
    const consentedCode = async () => {
      const consent = await keep(t.agent.get('/oauth/authorize').query(codeQuery));
      expect(consent.status).toBe(200);
      secrets.add(parseForm(consent.text).fields.csrf!);
      const allowed = await keep(answerConsent(t, consent.text, 'allow'));
      const code = redirectParams(allowed.headers.location!).code!;
      secrets.add(code);
      return code;
    };

    // The code flow with PKCE, consent and its CSRF token.
    const verifier = 'k'.repeat(64);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const consent = await keep(
      authorizeWithLogin(t, { ...codeQuery, code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    secrets.add(parseForm(consent.text).fields.csrf!);
    const allowed = await keep(answerConsent(t, consent.text, 'allow'));
    const code = redirectParams(allowed.headers.location!).code!;
    secrets.add(code);
    // Error paths: a wrong verifier (refused before the code is taken, so the right one then
    // works), the replay of the code, a wrong secret by Basic.
    await keep(exchangeCode(t, code, { code_verifier: 'w'.repeat(64) }));
    await keep(exchangeCode(t, code, { code_verifier: verifier }));
    await keep(exchangeCode(t, code, { code_verifier: verifier })); // replay: the grant is revoked
    // The replay revoked the grant, consent included: the next authorization asks again.
    const second = await consentedCode();
    const tokens = await keep(exchangeCode(t, second));
    const rotated = await keep(refreshWith(t, tokens.body.refresh_token));
    await keep(refreshWith(t, tokens.body.refresh_token)); // reuse: the grant is revoked
    await keep(refreshWith(t, rotated.body.refresh_token));
    await keep(
      t.agent
        .post('/oauth/token')
        .set('Authorization', basicAuth('code-client', `${t.codeClient.clientSecret}x`))
        .type('form')
        .send({
          grant_type: 'refresh_token',
          refresh_token: rotated.body.refresh_token,
          redirect_uri: CODE_REDIRECT,
        }),
    );
    // Internal errors, logged with their cause: storage failing at the token endpoint and after login.
    const third = await consentedCode();
    const saveAll = t.storage.tokens.saveAll.bind(t.storage.tokens);
    t.storage.tokens.saveAll = () => Promise.reject(new Error('storage down'));
    await keep(
      t.agent.post('/oauth/token').type('form').send({
        grant_type: 'authorization_code',
        code: third,
        client_id: 'code-client',
        client_secret: t.codeClient.clientSecret,
        redirect_uri: CODE_REDIRECT,
      }),
    );
    t.storage.tokens.saveAll = saveAll;
    for (let i = 0; i < 3; i++)
      await keep(exchangeCode(t, second, { client_secret: `${t.codeClient.clientSecret}!` }));
    // Failing once the redirect URI is verified (the code's write): the error goes to the client.
    const set = t.storage.ephemeral.set.bind(t.storage.ephemeral);
    t.storage.ephemeral.set = (key, ...rest) =>
      key.startsWith('code:') ? Promise.reject(new Error('storage down')) : set(key, ...rest);
    await keep(t.agent.get('/oauth/authorize').query(codeQuery));

    expect(responses.map((r) => r.status)).toEqual([
      200, 303, 400, 200, 400, 200, 303, 200, 200, 400, 400, 401, 200, 303, 500, 401, 401, 429, 302,
    ]);
    expect(logger.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      'internal error',
      'internal error',
    ]);
    const logged = inspect(logger.lines, { depth: 10 }) + consoleLines.join('\n');
    // Every answer that reports an error: its description, its page, its redirect.
    const errors = responses
      .filter((r) => r.status >= 400 || r.headers.location?.includes('error='))
      .map((r) =>
        [r.body?.error_description, r.type === 'text/html' ? r.text : '', r.headers.location].join('\n'),
      );
    expect(errors).toHaveLength(10);
    expect(secrets.size).toBeGreaterThanOrEqual(10);
    for (const secret of secrets) {
      expect(logged).not.toContain(secret);
      for (const text of errors) expect(text).not.toContain(secret);
    }
  });
});
