/**
 * Token revocation (RFC 7009) at POST /oauth/revoke: each revocation proven by calling the API
 * and the token endpoint afterwards, on every storage engine.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerClient } from '../src/index.js';
import { createTestApp, expectOAuthError, type TestApp } from './support/app.js';
import {
  basicAuth,
  callRealms,
  mountClientEndpoints,
  obtainTokens,
  postAs,
  refreshWith,
  storageEngines,
} from './support/endpoints.js';

const engines = await storageEngines();

describe.each(engines)('token revocation on $name storage', ({ skip, open }) => {
  const test = it.skipIf(skip !== null);
  const suffix = skip === null ? '' : ` (${skip})`;
  let t: TestApp;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    if (skip !== null) return;
    const opened = await open();
    dispose = opened.dispose;
    t = await createTestApp({ storage: opened.storage });
    mountClientEndpoints(t);
  });
  afterEach(async () => {
    if (skip !== null) return;
    await t.close();
    await dispose();
  });

  test(`revoking the refresh token ends the grant: its access tokens and the refresh fail${suffix}`, async () => {
    const tokens = await obtainTokens(t);
    const refreshed = await refreshWith(t, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    expect((await callRealms(t, tokens.access_token)).status).toBe(200);
    expect((await callRealms(t, refreshed.body.access_token)).status).toBe(200);

    const res = await postAs(t, '/oauth/revoke', {
      token: tokens.refresh_token,
      token_type_hint: 'refresh_token',
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');

    for (const access of [tokens.access_token, refreshed.body.access_token]) {
      const realms = await callRealms(t, access);
      expect(realms.status).toBe(401);
      expect(realms.headers['www-authenticate']).toContain('error="invalid_token"');
    }
    expectOAuthError(await refreshWith(t, tokens.refresh_token), 'invalid_grant');
  });

  test(`revoking an access token revokes its whole grant, refresh token included${suffix}`, async () => {
    const tokens = await obtainTokens(t);
    const res = await postAs(t, '/oauth/revoke', { token: tokens.access_token });
    expect(res.status).toBe(200);
    expect((await callRealms(t, tokens.access_token)).status).toBe(401);
    expectOAuthError(await refreshWith(t, tokens.refresh_token), 'invalid_grant');
  });

  test(`a wrong or unknown token_type_hint only changes the search order${suffix}`, async () => {
    const first = await obtainTokens(t);
    // A refresh token hinted as an access token.
    expect(
      (await postAs(t, '/oauth/revoke', { token: first.refresh_token, token_type_hint: 'access_token' }))
        .status,
    ).toBe(200);
    expect((await callRealms(t, first.access_token)).status).toBe(401);

    const second = await obtainTokens(t);
    // A hint RFC 7009 does not define: no unsupported_token_type, the token is still revoked.
    expect(
      (await postAs(t, '/oauth/revoke', { token: second.access_token, token_type_hint: 'id_token' })).status,
    ).toBe(200);
    expectOAuthError(await refreshWith(t, second.refresh_token), 'invalid_grant');
  });

  test(`leaves the user's other grants alone${suffix}`, async () => {
    const revoked = await obtainTokens(t);
    const kept = await obtainTokens(t);
    await postAs(t, '/oauth/revoke', { token: revoked.refresh_token });
    expect((await callRealms(t, revoked.access_token)).status).toBe(401);
    expect((await callRealms(t, kept.access_token)).status).toBe(200);
    expect((await refreshWith(t, kept.refresh_token)).status).toBe(200);
  });

  test(`answers 200 to another client and revokes nothing of the owner's${suffix}`, async () => {
    const tokens = await obtainTokens(t);
    const other = await registerClient(t.storage, {
      applicationName: 'Other client',
      redirectUri: 'https://other.example/cb',
    });
    const otherClient = { clientId: other.clientId, clientSecret: other.clientSecret! };
    for (const token of [tokens.refresh_token, tokens.access_token]) {
      const res = await postAs(t, '/oauth/revoke', { token }, otherClient);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
    }
    expect((await callRealms(t, tokens.access_token)).status).toBe(200);
    expect((await refreshWith(t, tokens.refresh_token)).status).toBe(200);
  });

  test(`answers 200 to an unknown or already revoked token${suffix}`, async () => {
    const tokens = await obtainTokens(t);
    expect((await postAs(t, '/oauth/revoke', { token: 'not-a-token' })).status).toBe(200);
    expect((await postAs(t, '/oauth/revoke', { token: tokens.refresh_token })).status).toBe(200);
    expect((await postAs(t, '/oauth/revoke', { token: tokens.refresh_token })).status).toBe(200);
    expect((await postAs(t, '/oauth/revoke', { token: tokens.access_token })).status).toBe(200);
  });
});

describe('token revocation: requests refused', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
    mountClientEndpoints(t);
  });
  afterEach(() => t.close());

  it('accepts HTTP Basic client authentication, as the token endpoint does', async () => {
    const tokens = await obtainTokens(t);
    const res = await t.agent
      .post('/oauth/revoke')
      .set('Authorization', basicAuth(t.codeClient.clientId, t.codeClient.clientSecret))
      .type('form')
      .send({ token: tokens.refresh_token });
    expect(res.status).toBe(200);
    expect((await callRealms(t, tokens.access_token)).status).toBe(401);
  });

  it('refuses a wrong, missing or implicit client with 401 invalid_client, and revokes nothing', async () => {
    const tokens = await obtainTokens(t);
    const attempts = [
      { client_id: t.codeClient.clientId, client_secret: 'wrong', token: tokens.refresh_token },
      { client_id: t.codeClient.clientId, token: tokens.refresh_token },
      { token: tokens.refresh_token },
      { client_id: 'implicit-client', token: tokens.refresh_token },
      { client_id: 'nobody', client_secret: 'x', token: tokens.refresh_token },
    ];
    for (const body of attempts) {
      const res = await t.agent.post('/oauth/revoke').type('form').send(body);
      expectOAuthError(res, 'invalid_client', 401);
      expect(res.headers['www-authenticate']).toBe(`Basic realm="${new URL(t.baseUrl).host}"`);
      expect(res.headers['cache-control']).toBe('no-store');
    }
    expect((await callRealms(t, tokens.access_token)).status).toBe(200);
  });

  it('refuses malformed requests with invalid_request', async () => {
    const tokens = await obtainTokens(t);
    const { clientId, clientSecret } = t.codeClient;
    const creds = `client_id=${clientId}&client_secret=${clientSecret}`;
    const raw = (body: string, type = 'application/x-www-form-urlencoded') =>
      t.agent.post('/oauth/revoke').set('Content-Type', type).send(body);

    expectOAuthError(await raw(creds), 'invalid_request');
    expectOAuthError(
      await raw(`${creds}&token=${tokens.refresh_token}&token=${tokens.access_token}`),
      'invalid_request',
    );
    expectOAuthError(
      await raw(
        JSON.stringify({ client_id: clientId, client_secret: clientSecret, token: 'x' }),
        'application/json',
      ),
      'invalid_request',
    );
    expectOAuthError(
      await t.agent.post(`/oauth/revoke?token=${tokens.refresh_token}`).type('form').send(creds),
      'invalid_request',
    );
    expectOAuthError(
      await t.agent
        .post('/oauth/revoke')
        .set('Authorization', basicAuth(clientId, clientSecret))
        .type('form')
        .send(`${creds}&token=x`),
      'invalid_request',
    );
    const tooLarge = await raw(`${creds}&token=${'a'.repeat(9000)}`);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatchObject({ error: 'invalid_request' });

    const get = await t.agent.get('/oauth/revoke');
    expectOAuthError(get, 'invalid_request');
    expect(get.headers.allow).toBe('POST');

    // None of these revoked anything.
    expect((await callRealms(t, tokens.access_token)).status).toBe(200);
  });
});
