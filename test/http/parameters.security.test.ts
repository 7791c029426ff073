import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CODE_REDIRECT,
  createTestApp,
  expectOAuthError,
  IMPLICIT_REDIRECT,
  redirectParams,
  type TestApp,
} from '../support/app.js';
import { authorizeWithLogin, exchangeCode, obtainCode, parseForm, pathOf } from '../support/flow.js';

// Also proven elsewhere: a repeated parameter at the authorization endpoint (authorize.errors.test.ts)
// and at the token endpoint, without consuming the code (token.endpoint.test.ts).

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(() => t.close());

const enc = encodeURIComponent;
const codeQuery = `response_type=code&client_id=code-client&redirect_uri=${enc(CODE_REDIRECT)}&state=s1`;

/** A refused authorization request stores nothing: no session, so no cookie. */
function expectPage(res: { status: number; headers: Record<string, string>; type: string }) {
  expect(res.status).toBe(400);
  expect(res.type).toBe('text/html');
  expect(res.headers.location).toBeUndefined();
  expect(res.headers['set-cookie']).toBeUndefined();
}

function expectRedirectedError(res: { status: number; headers: Record<string, string> }, error: string) {
  expect(res.status).toBe(302);
  const location = new URL(res.headers.location!);
  expect(location.origin + location.pathname).toBe(CODE_REDIRECT);
  expect(redirectParams(location.href)).toMatchObject({ error, state: 's1' });
  expect(res.headers['set-cookie']).toBeUndefined();
}

/** A token request whose body is given raw, with the code client's credentials. */
function rawToken(body: string, contentType = 'application/x-www-form-urlencoded') {
  return t.agent.post('/oauth/token').set('Content-Type', contentType).send(body);
}
const credentials = `client_id=code-client&client_secret=${'SECRET'}`;
const withSecret = (body: string) => body.replace('SECRET', enc(t.codeClient.clientSecret));

describe('parameters: array and object syntax', () => {
  it.each([
    ['scope[]', `${codeQuery}&scope[]=admin`],
    ['scope[x]', `${codeQuery}&scope[x]=admin`],
    ['encoded scope%5B%5D', `${codeQuery}&scope%5B%5D=admin`],
    ['an unknown name[]', `${codeQuery}&foo[]=1`],
  ])('authorization endpoint, %s: invalid_request to the verified redirect URI', async (_name, query) => {
    expectRedirectedError(await t.agent.get(`/oauth/authorize?${query}`), 'invalid_request');
  });

  it.each([
    ['client_id[]', `response_type=code&client_id[]=code-client&redirect_uri=${enc(CODE_REDIRECT)}`],
    [
      'client_id[] beside client_id',
      `response_type=code&client_id=code-client&client_id[]=x&redirect_uri=${enc(CODE_REDIRECT)}`,
    ],
    ['redirect_uri[x]', `response_type=code&client_id=code-client&redirect_uri[x]=${enc(CODE_REDIRECT)}`],
  ])('authorization endpoint, %s: a page, never a redirect', async (_name, query) => {
    expectPage(await t.agent.get(`/oauth/authorize?${query}`));
  });

  it('token endpoint: code[], client_secret[x] and redirect_uri[] are refused before the code is touched', async () => {
    const { code } = await obtainCode(t);
    const base = `grant_type=authorization_code&redirect_uri=${enc(CODE_REDIRECT)}`;
    for (const body of [
      `${base}&code[]=${code}&${credentials}`,
      `${base}&code=${code}&code[]=${code}&${credentials}`,
      `${base}&code=${code}&client_id=code-client&client_secret[x]=SECRET`,
      `grant_type=authorization_code&code=${code}&redirect_uri[]=${enc(CODE_REDIRECT)}&${credentials}`,
      `${base}&code=${code}&${credentials}&grant_type[]=refresh_token`,
    ]) {
      const res = await rawToken(withSecret(body));
      expectOAuthError(res, 'invalid_request');
      expect(res.body.error_description).toMatch(/^The parameter \w+ must be given once\.$/);
    }
    expect((await exchangeCode(t, code)).status).toBe(200);
  });

  it('authorization endpoint, state[] beside state: invalid_request, and neither state is echoed', async () => {
    const res = await t.agent.get(`/oauth/authorize?${codeQuery}&state[]=other`);
    expect(res.status).toBe(302);
    expect(redirectParams(res.headers.location!)).toEqual({
      error: 'invalid_request',
      error_description: 'The parameter state must be given once.',
      iss: t.baseUrl,
    });
  });

  it('consent form: decision[] is refused, nothing is granted, and the genuine answer still works', async () => {
    const consent = await authorizeWithLogin(t, {
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: CODE_REDIRECT,
    });
    const form = parseForm(consent.text);
    const body = new URLSearchParams({ ...form.fields, 'decision[]': 'allow' }).toString();
    const res = await t.agent.post(pathOf(form.action)).type('form').send(body);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    const user = await t.storage.users.findOrCreate(
      { identifier: t.provider.userUrl('alice'), provider: 'openid' },
      'unused',
      0,
    );
    expect(await t.storage.grants.list({ userId: user.id, clientId: 'code-client' })).toEqual([]);
    const ok = await t.agent
      .post(pathOf(form.action))
      .type('form')
      .send({ ...form.fields, decision: 'allow' });
    expect(ok.status).toBe(303);
  });
});

describe('parameters: empty values count as absent (RFC 6749 3.1)', () => {
  it.each([
    [
      'client_id=',
      `response_type=code&client_id=&redirect_uri=${enc(CODE_REDIRECT)}`,
      'client_id is missing',
    ],
    ['redirect_uri=', 'response_type=code&client_id=code-client&redirect_uri=', 'no redirect_uri'],
  ])('authorization endpoint, %s: a page', async (_name, query, message) => {
    const res = await t.agent.get(`/oauth/authorize?${query}`);
    expectPage(res);
    expect(res.text).toContain(message);
  });

  it('authorization endpoint, response_type=: invalid_request to the redirect URI', async () => {
    const res = await t.agent.get(
      `/oauth/authorize?${codeQuery.replace('response_type=code', 'response_type=')}`,
    );
    expectRedirectedError(res, 'invalid_request');
  });

  it('authorization endpoint, state= on an implicit request: refused as missing', async () => {
    const res = await t.agent.get(
      `/oauth/authorize?response_type=token&client_id=implicit-client&redirect_uri=${enc(IMPLICIT_REDIRECT)}&state=`,
    );
    expect(res.status).toBe(302);
    expect(redirectParams(res.headers.location!)).toMatchObject({ error: 'invalid_request' });
    expect(redirectParams(res.headers.location!)).not.toHaveProperty('state');
  });

  it('token endpoint: empty code, redirect_uri or grant_type is invalid_request, an empty secret invalid_client', async () => {
    const { code } = await obtainCode(t);
    expectOAuthError(await exchangeCode(t, code, { code: '' }), 'invalid_request');
    expectOAuthError(await exchangeCode(t, code, { redirect_uri: '' }), 'invalid_request');
    expectOAuthError(await exchangeCode(t, code, { grant_type: '' }), 'invalid_request');
    expectOAuthError(await exchangeCode(t, code, { client_secret: '' }), 'invalid_client', 401);
    expect((await exchangeCode(t, code)).status).toBe(200);
  });
});

describe('parameters: overlong values', () => {
  const long = 'a'.repeat(2049);

  it('token endpoint: an overlong code, redirect_uri or code_verifier is invalid_request, the code untouched', async () => {
    const { code } = await obtainCode(t);
    for (const extra of [
      { code: long },
      { redirect_uri: `${CODE_REDIRECT}/${long}` },
      { code_verifier: long },
    ] as Record<string, string>[]) {
      expectOAuthError(await exchangeCode(t, code, extra), 'invalid_request');
    }
    expect((await exchangeCode(t, code)).status).toBe(200);
  });

  it('authorization endpoint: an overlong state or scope is invalid_request; an overlong redirect_uri a page', async () => {
    expectRedirectedError(
      await t.agent.get(`/oauth/authorize?${codeQuery}&scope=${long}`),
      'invalid_request',
    );
    const res = await t.agent.get(`/oauth/authorize?${codeQuery.replace('state=s1', `state=${long}`)}`);
    expect(res.status).toBe(302);
    expect(redirectParams(res.headers.location!).error).toBe('invalid_request');
    expectPage(
      await t.agent.get(
        `/oauth/authorize?response_type=code&client_id=code-client&redirect_uri=${enc(`${CODE_REDIRECT}/${long}`)}`,
      ),
    );
  });
});

describe('parameters in the wrong place: the token endpoint', () => {
  it('refuses GET with every parameter in the query, with Allow: POST, and the code stays usable', async () => {
    const { code } = await obtainCode(t);
    const query = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CODE_REDIRECT,
      client_id: 'code-client',
      client_secret: t.codeClient.clientSecret,
    });
    for (const method of ['get', 'put', 'delete'] as const) {
      const res = await t.agent[method](`/oauth/token?${query}`);
      expectOAuthError(res, 'invalid_request');
      expect(res.headers.allow).toBe('POST');
      expect(res.headers['cache-control']).toBe('no-store');
    }
    expect((await exchangeCode(t, code)).status).toBe(200);
  });

  it('refuses a JSON body, a text body and parameters in the URL, and the code stays usable', async () => {
    const { code } = await obtainCode(t);
    const fields = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CODE_REDIRECT,
      client_id: 'code-client',
      client_secret: t.codeClient.clientSecret,
    };
    const form = new URLSearchParams(fields).toString();
    for (const res of [
      await rawToken(JSON.stringify(fields), 'application/json'),
      await rawToken(form, 'text/plain'),
      await rawToken(form, 'multipart/form-data; boundary=x'),
      await t.agent.post(`/oauth/token?code=${code}`).type('form').send(form),
    ]) {
      expectOAuthError(res, 'invalid_request');
    }
    expect((await exchangeCode(t, code)).status).toBe(200);
  });
});

describe('parameters: unknown plain parameters are ignored (RFC 6749 3.1)', () => {
  it('an authorization request with extra parameters proceeds', async () => {
    const res = await t.agent.get(`/oauth/authorize?${codeQuery}&foo=bar&prompt=none`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('Sign in to continue to Photo Printer');
  });

  it('a token request with an extra parameter succeeds', async () => {
    const { code } = await obtainCode(t);
    expect((await exchangeCode(t, code, { audience: 'x' })).status).toBe(200);
  });
});
