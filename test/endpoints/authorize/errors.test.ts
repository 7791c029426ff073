import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerClient } from '../../../src/index.js';
import {
  CODE_REDIRECT,
  createTestApp,
  IMPLICIT_REDIRECT,
  redirectParams,
  type TestApp,
} from '../../support/app.js';
import { authorizeWithLogin, parseForm, pathOf } from '../../support/flow.js';
import { startCanary } from '../../support/openid-servers.js';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(() => t.close());

const code = { response_type: 'code', client_id: 'code-client', redirect_uri: CODE_REDIRECT, state: 's1' };

function rawAuthorize(query: string) {
  return t.agent.get(`/oauth/authorize?${query}`);
}

describe('authorization endpoint: errors shown as a page, never redirected', () => {
  it.each([
    ['unknown client', { ...code, client_id: 'nobody' }, 'not registered'],
    ['missing client_id', { ...code, client_id: '' }, 'client_id is missing'],
    ['missing redirect_uri', { ...code, redirect_uri: '' }, 'no redirect_uri'],
    ['another host', { ...code, redirect_uri: 'https://evil.example/cb' }, 'not registered for this client'],
    [
      'a longer host',
      { ...code, redirect_uri: 'https://client.example.evil/cb' },
      'not registered for this client',
    ],
    [
      'other letter case',
      { ...code, redirect_uri: 'https://client.example/CB' },
      'not registered for this client',
    ],
    ['javascript:', { ...code, redirect_uri: 'javascript:alert(1)' }, 'not registered for this client'],
  ])('%s', async (_name, query, message) => {
    const res = await t.agent.get('/oauth/authorize').query(query);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.type).toBe('text/html');
    expect(res.text).toContain(message);
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('refuses a repeated client_id or redirect_uri with a page', async () => {
    for (const query of [
      `response_type=code&client_id=code-client&client_id=code-client&redirect_uri=${encodeURIComponent(CODE_REDIRECT)}`,
      `response_type=code&client_id=code-client&redirect_uri=${encodeURIComponent(CODE_REDIRECT)}&redirect_uri=x`,
    ]) {
      const res = await rawAuthorize(query);
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
    }
  });

  it('refuses an opIdentifier that is not configured before contacting anything', async () => {
    const canary = await startCanary();
    const url = canary.url;
    const res = await t.agent.get('/oauth/authorize').query({ ...code, opIdentifier: url });
    expect(res.status).toBe(400);
    expect(res.text).toContain('not accepted here');
    expect(res.headers.location).toBeUndefined();
    const login = await t.agent.get('/oauth/login').query({ openid_identifier: url });
    expect(login.status).toBe(400);
    expect(canary.hits()).toBe(0);
    await canary.close();
  });

  it('refuses a disabled client', async () => {
    await registerClient(t.storage, {
      clientId: 'disabled-client',
      applicationName: 'Disabled',
      redirectUri: CODE_REDIRECT,
    });
    expect(await t.storage.clients.update!('disabled-client', { disabled: true })).toMatchObject({
      disabled: true,
    });
    const res = await t.agent.get('/oauth/authorize').query({ ...code, client_id: 'disabled-client' });
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });
});

describe('authorization endpoint: errors redirected to the verified redirect URI', () => {
  it.each([
    ['missing response_type', { ...code, response_type: '' }, 'invalid_request'],
    ['unknown response_type', { ...code, response_type: 'id_token' }, 'unsupported_response_type'],
    ['code client asking for a token', { ...code, response_type: 'token' }, 'unauthorized_client'],
    ['scope not allowed', { ...code, scope: 'admin' }, 'invalid_scope'],
    [
      'PKCE plain',
      { ...code, code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' },
      'invalid_request',
    ],
  ])('%s', async (_name, query, error) => {
    const res = await t.agent.get('/oauth/authorize').query(query);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location!);
    expect(location.origin + location.pathname).toBe(CODE_REDIRECT);
    expect(redirectParams(location.href)).toMatchObject({ error, state: 's1' });
  });

  it('refuses a repeated parameter with invalid_request', async () => {
    const res = await rawAuthorize(
      `response_type=code&client_id=code-client&redirect_uri=${encodeURIComponent(CODE_REDIRECT)}&scope=realms&scope=profile`,
    );
    expect(res.status).toBe(302);
    expect(redirectParams(res.headers.location!)).toMatchObject({ error: 'invalid_request' });
  });

  it('sends implicit errors in the fragment, and requires state', async () => {
    const res = await t.agent
      .get('/oauth/authorize')
      .query({ response_type: 'token', client_id: 'implicit-client', redirect_uri: IMPLICIT_REDIRECT });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location!);
    expect(location.search).toBe('');
    expect(redirectParams(location.href)).toMatchObject({ error: 'invalid_request' });
  });

  it('refuses PKCE on an implicit request, in the fragment', async () => {
    const res = await t.agent.get('/oauth/authorize').query({
      response_type: 'token',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
      state: 'x',
      code_challenge: 'a'.repeat(43),
      code_challenge_method: 'S256',
    });
    expect(new URL(res.headers.location!).search).toBe('');
    expect(redirectParams(res.headers.location!)).toMatchObject({ error: 'invalid_request', state: 'x' });
  });

  it('refuses response_type=code for an implicit client', async () => {
    const res = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
      state: 'x',
    });
    expect(redirectParams(res.headers.location!)).toMatchObject({ error: 'unauthorized_client', state: 'x' });
  });

  it('keeps a path and query under the registered redirect URI', async () => {
    const res = await t.agent
      .get('/oauth/authorize')
      .query({ ...code, redirect_uri: `${CODE_REDIRECT}/done?tab=2`, scope: 'nope' });
    expect(res.headers.location).toMatch(/^https:\/\/client\.example\/cb\/done\?tab=2&error=invalid_scope&/);
  });
});

describe('consent page', () => {
  it('escapes the application name', async () => {
    await registerClient(t.storage, {
      clientId: 'xss',
      applicationName: '<img src=x onerror=alert(1)>',
      redirectUri: 'https://xss.example/cb',
    });
    const res = await authorizeWithLogin(t, {
      response_type: 'code',
      client_id: 'xss',
      redirect_uri: 'https://xss.example/cb',
    });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('<img');
    expect(res.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('refuses a decision with a wrong CSRF token, from another origin, or for another transaction', async () => {
    const consent = await authorizeWithLogin(t, code);
    const form = parseForm(consent.text);
    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      t.agent.post(pathOf(form.action)).type('form').set(headers).send(fields);
    for (const [res, status] of [
      [await post({ ...form.fields, csrf: 'wrong', decision: 'allow' }), 400],
      [await post({ ...form.fields, transaction: 'other', decision: 'allow' }), 400],
      [await post({ ...form.fields, decision: 'allow' }, { Origin: 'https://evil.example' }), 403],
      [
        await post({ ...form.fields, decision: 'allow' }, { 'Sec-Fetch-Site': 'cross-site', Origin: 'null' }),
        403,
      ],
      [await post({ ...form.fields, decision: 'allow' }, { 'Sec-Fetch-Site': 'same-site' }), 403],
    ] as const) {
      expect(res.status).toBe(status);
      expect(res.headers.location).toBeUndefined();
    }
    const user = (await t.storage.users.findOrCreate(
      { identifier: t.provider.userUrl('alice'), provider: 'openid' },
      'x',
      0,
    ))!;
    expect(await t.storage.grants.list({ userId: user.id, clientId: 'code-client' })).toEqual([]);
    // The genuine form still works afterwards, as a browser sends it under Referrer-Policy: no-referrer.
    const ok = await post(
      { ...form.fields, decision: 'allow' },
      { 'Sec-Fetch-Site': 'same-origin', Origin: 'null' },
    );
    expect(ok.status).toBe(303);
  });

  it('shows a page when the login at the provider is cancelled', async () => {
    const start = await t.agent
      .get('/oauth/authorize')
      .query({ ...code, opIdentifier: t.provider.identifier });
    const toProvider = await t.agent.get(pathOf(start.headers.location!));
    const page = await fetch(toProvider.headers.location!);
    const form = parseForm(await page.text());
    const answer = await fetch(form.action, {
      method: 'POST',
      body: new URLSearchParams({ ...form.fields, dev_action: 'cancel' }),
      redirect: 'manual',
    });
    const res = await t.agent.get(pathOf(answer.headers.get('location')!));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('Try again');
  });
});
