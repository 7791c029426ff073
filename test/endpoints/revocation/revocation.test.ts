/**
 * Revocation: of a token (RFC 7009) at POST /oauth/revoke, of an application by its user, and of
 * a client by the operator. Revoking any token revokes its whole grant (the user's authorization
 * of the client). Each revocation proven by calling the API and the token endpoint afterwards,
 * on every storage engine.
 */
import supertest from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { usable } from '../../../src/grants/index.js';
import { registerClient, revokeApplication } from '../../../src/index.js';
import {
  CODE_REDIRECT,
  IMPLICIT_REDIRECT,
  createTestApp,
  expectOAuthError,
  redirectParams,
  type TestApp,
} from '../../support/app.js';
import {
  basicAuth,
  callRealms,
  mountClientEndpoints,
  obtainTokens,
  postAs,
  recordEvents,
  refreshWith,
  storageEngines,
} from '../../support/endpoints.js';
import { answerConsent, exchangeCode, obtainCode, parseForm, pathOf } from '../../support/flow.js';
import { seedCode, seedTokens, storedToken, tokenWorks } from '../../support/grants.js';

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
    expect(res.body).toEqual({});
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');

    for (const access of [tokens.access_token, refreshed.body.access_token]) {
      const realms = await callRealms(t, access);
      expect(realms.status).toBe(401);
      expect(realms.headers['www-authenticate']).toContain('error="invalid_token"');
    }
    expectOAuthError(await refreshWith(t, tokens.refresh_token), 'invalid_grant');
    // The consent went with the grant: the next authorization asks for it again.
    const [grant] = await t.storage.grants.list({ clientId: t.codeClient.clientId });
    expect(grant!.revokedAt).toEqual(expect.any(Number));
    expect(await consentAsked(t)).toBe(true);
  });

  test(`revoking an access token revokes its whole grant, refresh token included${suffix}`, async () => {
    const tokens = await obtainTokens(t);
    const events = recordEvents(t);
    const res = await postAs(t, '/oauth/revoke', { token: tokens.access_token });
    expect(res.status).toBe(200);
    expect((await callRealms(t, tokens.access_token)).status).toBe(401);
    expectOAuthError(await refreshWith(t, tokens.refresh_token), 'invalid_grant');
    const { grant } = (await storedToken(t.server, tokens.access_token))!;
    expect(grant!.revokedAt).toEqual(expect.any(Number));
    expect(events.filter((e) => e.type === 'token.revoked')).toEqual([
      expect.objectContaining({
        tokenType: 'access_token',
        grantId: grant!.grantId,
        clientId: 'code-client',
      }),
    ]);
    expect(await consentAsked(t)).toBe(true);
  });

  test(`a wrong or unknown token_type_hint only changes the search order${suffix}`, async () => {
    const first = await obtainTokens(t);
    // A refresh token hinted as an access token.
    expect(
      (await postAs(t, '/oauth/revoke', { token: first.refresh_token, token_type_hint: 'access_token' }))
        .status,
    ).toBe(200);
    expect((await callRealms(t, first.access_token)).status).toBe(401);
    expectOAuthError(await refreshWith(t, first.refresh_token), 'invalid_grant');

    // Another browser and user, whose grant the revocation above left standing.
    t.agent = supertest.agent(t.baseUrl);
    const second = await obtainTokens(t, {}, 'bob');
    // A hint RFC 7009 does not define: no unsupported_token_type, the token is still revoked.
    expect(
      (await postAs(t, '/oauth/revoke', { token: second.access_token, token_type_hint: 'id_token' })).status,
    ).toBe(200);
    expectOAuthError(await refreshWith(t, second.refresh_token), 'invalid_grant');
  });

  test(`revokes every token of the grant, and leaves the other grants alone${suffix}`, async () => {
    const revoked = await obtainTokens(t);
    // The same user and client again (the browser is logged in and trusted): the same grant.
    const sameGrant = await obtainTokens(t);
    const alice = (await storedToken(t.server, revoked.access_token))!.token.userId;
    // The same user's grant for another client, and another user's grant for the same client.
    const other = await registerClient(t.storage, {
      applicationName: 'Other client',
      redirectUri: 'https://other.example/cb',
    });
    const otherClient = await seedTokens(t.server, other.clientId, alice);
    t.agent = supertest.agent(t.baseUrl);
    const bob = await obtainTokens(t, {}, 'bob');

    await postAs(t, '/oauth/revoke', { token: revoked.refresh_token });
    for (const token of [revoked.access_token, sameGrant.access_token]) {
      expect((await callRealms(t, token)).status).toBe(401);
    }
    expectOAuthError(await refreshWith(t, sameGrant.refresh_token), 'invalid_grant');
    expect((await callRealms(t, bob.access_token)).status).toBe(200);
    expect((await refreshWith(t, bob.refresh_token)).status).toBe(200);
    expect((await callRealms(t, otherClient.accessToken)).status).toBe(200);
    expect(await tokenWorks(t.server, otherClient.refreshToken)).toBe(true);
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
      expect(res.body).toEqual({});
    }
    expect((await callRealms(t, tokens.access_token)).status).toBe(200);
    expect((await refreshWith(t, tokens.refresh_token)).status).toBe(200);
  });

  test(`answers 200 to an unknown or already revoked token${suffix}`, async () => {
    const tokens = await obtainTokens(t);
    const events = recordEvents(t);
    expect((await postAs(t, '/oauth/revoke', { token: 'not-a-token' })).status).toBe(200);
    expect((await postAs(t, '/oauth/revoke', { token: tokens.refresh_token })).status).toBe(200);
    expect((await postAs(t, '/oauth/revoke', { token: tokens.refresh_token })).status).toBe(200);
    expect((await postAs(t, '/oauth/revoke', { token: tokens.access_token })).status).toBe(200);
    // One grant, revoked once.
    expect(events.filter((e) => e.type === 'token.revoked')).toHaveLength(1);
  });

  test(`a code issued before its application was revoked on the applications page is refused${suffix}`, async () => {
    const tokens = await obtainTokens(t);
    const { code } = await obtainCode(t);
    const saved = savedTokenHashes(t);
    const events = recordEvents(t);

    const page = await t.agent.get('/oauth/applications');
    const item = page.text.split('<li>').find((part) => part.includes('<h2>Photo Printer</h2>'));
    const form = parseForm(item!);
    const revoked = await t.agent
      .post(pathOf(form.action))
      .type('form')
      .set('Sec-Fetch-Site', 'same-origin')
      .send(form.fields);
    expect(revoked.status).toBe(303);

    const res = await exchangeCode(t, code);
    expectOAuthError(res, 'invalid_grant');
    expect(res.body).not.toHaveProperty('access_token');
    expect(res.body).not.toHaveProperty('refresh_token');
    expect(events.map((e) => e.type)).not.toContain('token.issued');
    expect(await workingTokens(t, saved)).toEqual([]);
    expect((await callRealms(t, tokens.access_token)).status).toBe(401);

    // The user trusts the application again: a new grant, whose code works; the old code still not.
    const consent = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: CODE_REDIRECT,
      state: 'again',
    });
    expect(consent.status).toBe(200);
    const allowed = await answerConsent(t, consent.text, 'allow');
    const fresh = await exchangeCode(t, redirectParams(allowed.headers.location!).code!);
    expect(fresh.status).toBe(200);
    expect((await callRealms(t, fresh.body.access_token)).status).toBe(200);
    expectOAuthError(await exchangeCode(t, code), 'invalid_grant');
  });

  test(`a code issued before revokeApplication is refused and yields no working token${suffix}`, async () => {
    const code = await seedCode(t.server, { clientId: t.codeClient.clientId, redirectUri: CODE_REDIRECT });
    const saved = savedTokenHashes(t);
    const events = recordEvents(t);

    expect(await revokeApplication(t.server, 'seeded-user', t.codeClient.clientId)).toBe(true);
    expect(events).toEqual([
      expect.objectContaining({ type: 'consent.revoked', userId: 'seeded-user', by: 'user' }),
    ]);
    const res = await exchangeCode(t, code);
    expectOAuthError(res, 'invalid_grant');
    expect(res.body).not.toHaveProperty('access_token');
    expect(await workingTokens(t, saved)).toEqual([]);
    expect(events.map((e) => e.type)).not.toContain('token.issued');
  });

  test(`a client disabled by the operator: its tokens stop working at once, and work again once enabled${suffix}`, async () => {
    const tokens = await obtainTokens(t);
    const update = t.storage.clients.update?.bind(t.storage.clients);
    expect(update, 'the adapter has clients.update').toBeDefined();
    expect((await callRealms(t, tokens.access_token)).status).toBe(200);

    await update!(t.codeClient.clientId, { disabled: true });
    const realms = await callRealms(t, tokens.access_token);
    expect(realms.status).toBe(401);
    expect(realms.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(await tokenWorks(t.server, tokens.access_token)).toBe(false);
    expect(await tokenWorks(t.server, tokens.refresh_token)).toBe(false);
    // Nor can it refresh: a disabled client does not authenticate.
    expectOAuthError(await refreshWith(t, tokens.refresh_token), 'invalid_client', 401);

    // Disabling is not revoking: the grant stands, and the tokens work again once it is enabled.
    await update!(t.codeClient.clientId, { disabled: false });
    expect((await callRealms(t, tokens.access_token)).status).toBe(200);
    expect((await refreshWith(t, tokens.refresh_token)).status).toBe(200);
  });
});

/** The hashes of the tokens the server saves from now on. */
function savedTokenHashes(t: TestApp): string[] {
  const saved: string[] = [];
  const save = t.storage.tokens.save.bind(t.storage.tokens);
  t.storage.tokens.save = (token) => (saved.push(token.tokenHash), save(token));
  return saved;
}

/** Those of `hashes` whose token works now. */
async function workingTokens(t: TestApp, hashes: readonly string[]): Promise<string[]> {
  const working: string[] = [];
  for (const hash of hashes) {
    const found = await t.storage.tokens.find(hash);
    if (found && usable(found, t.server.clock())) working.push(hash);
  }
  return working;
}

/** Whether the browser's next authorization request for the code client shows the consent form. */
async function consentAsked(t: TestApp): Promise<boolean> {
  const res = await t.agent.get('/oauth/authorize').query({
    response_type: 'code',
    client_id: t.codeClient.clientId,
    redirect_uri: CODE_REDIRECT,
    state: 'again',
  });
  return res.status === 200 && parseForm(res.text).action.endsWith('/oauth/authorize/decision');
}

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

  it('lets a public (implicit) client revoke its own token by client_id alone (RFC 7009 5), and nothing else', async () => {
    const others = await obtainTokens(t);
    // Signed in already: the implicit client's request goes straight to its consent page.
    const consent = await t.agent.get('/oauth/authorize').query({
      response_type: 'token',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
      state: 'abc',
    });
    const implicit = redirectParams((await answerConsent(t, consent.text, 'allow')).headers.location!);

    // Another client's token: 200, as RFC 7009 2.2 says, and nothing revoked.
    const foreign = await t.agent
      .post('/oauth/revoke')
      .type('form')
      .send({ client_id: 'implicit-client', token: others.access_token });
    expect(foreign.status).toBe(200);
    expect((await callRealms(t, others.access_token)).status).toBe(200);

    expect((await callRealms(t, implicit.access_token!)).status).toBe(200);
    const own = await t.agent
      .post('/oauth/revoke')
      .type('form')
      .send({ client_id: 'implicit-client', token: implicit.access_token });
    expect(own.status).toBe(200);
    expect((await callRealms(t, implicit.access_token!)).status).toBe(401);
  });

  it('refuses a wrong or missing client with 401 invalid_client, and revokes nothing', async () => {
    const tokens = await obtainTokens(t);
    const attempts = [
      { client_id: t.codeClient.clientId, client_secret: 'wrong', token: tokens.refresh_token },
      { client_id: t.codeClient.clientId, token: tokens.refresh_token },
      { token: tokens.refresh_token },
      { client_id: 'implicit-client', client_secret: 'x', token: tokens.refresh_token },
      { client_id: 'nobody', client_secret: 'x', token: tokens.refresh_token },
      { client_id: 'nobody', token: tokens.refresh_token },
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
