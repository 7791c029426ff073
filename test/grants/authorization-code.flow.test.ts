import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, redirectParams, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin, exchangeCode, obtainCode } from '../support/flow.js';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(() => t.close());

describe('authorization code grant, end to end through the development provider', () => {
  it('issues a code after login and consent, exchanges it, and the token reads /v1/realms', async () => {
    const consent = await authorizeWithLogin(t, {
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
      state: 'st-1',
    });
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Do you trust Photo Printer?');
    expect(consent.headers['x-frame-options']).toBe('DENY');
    expect(consent.headers['cache-control']).toBe('no-store');

    const allowed = await answerConsent(t, consent.text, 'allow');
    expect(allowed.status).toBe(303);
    const location = new URL(allowed.headers.location!);
    expect(location.origin + location.pathname).toBe('https://client.example/cb');
    const params = redirectParams(location.href);
    expect(params.state).toBe('st-1');
    expect(params.code).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const tokens = await exchangeCode(t, params.code!);
    expect(tokens.status).toBe(200);
    expect(tokens.headers['cache-control']).toBe('no-store');
    expect(tokens.headers.pragma).toBe('no-cache');
    expect(tokens.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.any(String),
      scope: 'realms profile',
    });

    const realms = await t.agent.get('/v1/realms').set('Authorization', `Bearer ${tokens.body.access_token}`);
    expect(realms.status).toBe(200);
    const user = await t.storage.users.findOrCreate(
      { identifier: t.provider.userUrl('alice'), provider: 'openid' },
      'unused',
      0,
    );
    expect(realms.body).toEqual({ realms: [`realm-of-${user.id}`] });
  });

  it('remembers consent: the next authorization redirects at once, without login or prompt', async () => {
    await obtainCode(t);
    const find = t.storage.clients.find.bind(t.storage.clients);
    let clientReads = 0;
    t.storage.clients.find = (id) => {
      clientReads++;
      return find(id);
    };
    const again = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
    });
    expect(again.status).toBe(302);
    expect(redirectParams(again.headers.location!).code).toBeTruthy();
    expect(clientReads).toBe(1); // the client verified by the request is reused for consent
  });

  it('asks again in a new browser session only for login, not for trust', async () => {
    await obtainCode(t);
    t.agent = (await import('supertest')).default.agent(t.baseUrl);
    const res = await authorizeWithLogin(t, {
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
    });
    expect(res.status).toBe(302);
    expect(redirectParams(res.headers.location!).code).toBeTruthy();
  });

  it('returns access_denied when the user does not trust the application, and remembers nothing', async () => {
    const consent = await authorizeWithLogin(t, {
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
      state: 's',
    });
    const denied = await answerConsent(t, consent.text, 'deny');
    expect(denied.status).toBe(303);
    expect(redirectParams(denied.headers.location!)).toEqual({
      error: 'access_denied',
      error_description: 'The user denied the request.',
      state: 's',
      iss: t.baseUrl,
    });
    const users = await t.storage.users.findOrCreate(
      { identifier: t.provider.userUrl('alice'), provider: 'openid' },
      'unused',
      0,
    );
    expect(await t.storage.grants.list({ userId: users.id, clientId: 'code-client' })).toEqual([]);
  });

  it('goes straight to the provider named by opIdentifier, skipping the selection page', async () => {
    const res = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
      opIdentifier: t.provider.identifier,
    });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(
      `${t.baseUrl}/oauth/login?openid_identifier=${encodeURIComponent(t.provider.identifier)}`,
    );
  });

  it('shows the selection page without opIdentifier', async () => {
    const res = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: 'code-client',
      redirect_uri: 'https://client.example/cb',
    });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Sign in to continue to Photo Printer');
    expect(res.text).toContain('Development provider');
  });

  it('refreshes: a new access token, the same refresh token, and both access tokens work', async () => {
    const { code } = await obtainCode(t);
    const first = (await exchangeCode(t, code)).body;
    const refreshed = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
      redirect_uri: 'https://client.example/cb',
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toBe(first.refresh_token);
    expect(refreshed.body.access_token).not.toBe(first.access_token);
    expect(refreshed.body.expires_in).toBe(3600);
    for (const token of [first.access_token, refreshed.body.access_token]) {
      const res = await t.agent.get('/v1/realms').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(200);
    }
  });
});
