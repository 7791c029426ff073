import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, IMPLICIT_REDIRECT, redirectParams, type TestApp } from '../support/app.js';
import { answerConsent, authorizeWithLogin } from '../support/flow.js';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(() => t.close());

const implicitQuery = {
  response_type: 'token',
  client_id: 'implicit-client',
  redirect_uri: IMPLICIT_REDIRECT,
  state: 'abc',
};

describe('implicit grant, end to end through the development provider', () => {
  it('puts exactly access_token, token_type, expires_in, scope, state and iss in the fragment', async () => {
    const consent = await authorizeWithLogin(t, implicitQuery);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Do you trust Single Page App?');
    const res = await answerConsent(t, consent.text, 'allow');
    expect(res.status).toBe(303);
    const location = new URL(res.headers.location!);
    expect(location.search).toBe('');
    expect(location.origin + location.pathname).toBe(IMPLICIT_REDIRECT);
    const params = redirectParams(location.href);
    expect(Object.keys(params).sort()).toEqual([
      'access_token',
      'expires_in',
      'iss',
      'scope',
      'state',
      'token_type',
    ]);
    expect(params).toMatchObject({
      token_type: 'Bearer',
      expires_in: '3600',
      state: 'abc',
      scope: 'realms',
      iss: t.baseUrl,
    });
    expect(params).not.toHaveProperty('refresh_token');

    const realms = await t.agent.get('/v1/realms').set('Authorization', `Bearer ${params.access_token}`);
    expect(realms.status).toBe(200);
  });

  it('redirects at once on the next authorization once the application is trusted', async () => {
    const consent = await authorizeWithLogin(t, implicitQuery);
    await answerConsent(t, consent.text, 'allow');
    const again = await t.agent.get('/oauth/authorize').query(implicitQuery);
    expect(again.status).toBe(302);
    expect(redirectParams(again.headers.location!).access_token).toBeTruthy();
  });

  it('reports a denial in the fragment', async () => {
    const consent = await authorizeWithLogin(t, implicitQuery);
    const res = await answerConsent(t, consent.text, 'deny');
    const location = new URL(res.headers.location!);
    expect(location.search).toBe('');
    expect(redirectParams(location.href)).toMatchObject({ error: 'access_denied', state: 'abc' });
  });

  it('never gives an implicit client a token at the token endpoint: it is not registered for a grant there', async () => {
    const res = await t.agent.post('/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code: 'x',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unauthorized_client');
  });
});
