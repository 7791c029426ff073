/**
 * Token introspection (RFC 7662) at POST /oauth/introspect: what is active, who may see which
 * tokens (section 4), and that every caller authenticates.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashSecret } from '../../../src/crypto/secrets.js';
import { introspectionRouter } from '../../../src/endpoints/routers.js';
import { memoryStorage, registerClient } from '../../../src/index.js';
import {
  createTestApp,
  expectOAuthError,
  IMPLICIT_REDIRECT,
  redirectParams,
  type TestApp,
} from '../../support/app.js';
import {
  basicAuth,
  callRealms,
  mountClientEndpoints,
  obtainTokens,
  postAs,
  refreshWith,
  storageEngines,
} from '../../support/endpoints.js';
import { answerConsent, authorizeWithLogin } from '../../support/flow.js';

/** Real time (the provider's nonces are checked against it) until a test stops the clock. */
let stoppedAt: number | null = null;
const clock = () => stoppedAt ?? Date.now();
beforeEach(() => {
  stoppedAt = null;
});

async function setUp(storage?: TestApp['storage']) {
  const t = await createTestApp({
    clock,
    tokens: { rotateRefreshTokens: true },
    // The clock is moved past an access token's hour; the login session must outlive it.
    session: { secret: 'a test session secret that is long enough', maxAge: 7200 },
    ...(storage ? { storage } : {}),
  });
  const api = await registerClient(t.storage, {
    clientId: 'realms-api',
    applicationName: 'Realms API (resource server)',
    redirectUri: 'https://realms-api.example/unused',
  });
  const other = await registerClient(t.storage, {
    applicationName: 'Other client',
    redirectUri: 'https://other.example/cb',
  });
  mountClientEndpoints(t, { resourceServers: ['realms-api'] });
  return {
    t,
    resourceServer: { clientId: api.clientId, clientSecret: api.clientSecret! },
    otherClient: { clientId: other.clientId, clientSecret: other.clientSecret! },
  };
}

const engines = await storageEngines();

describe.each(engines)('token introspection on $name storage', ({ skip, open }) => {
  const test = it.skipIf(skip !== null);
  const suffix = skip === null ? '' : ` (${skip})`;
  let ctx: Awaited<ReturnType<typeof setUp>>;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    if (skip !== null) return;
    const opened = await open();
    dispose = opened.dispose;
    ctx = await setUp(opened.storage);
  });
  afterEach(async () => {
    if (skip !== null) return;
    await ctx.t.close();
    await dispose();
  });

  test(`describes a live access token to the resource server, with the fields of RFC 7662 2.2${suffix}`, async () => {
    const { t, resourceServer } = ctx;
    const tokens = await obtainTokens(t, { scope: 'realms' });
    const stored = (await t.storage.tokens.find(hashSecret(tokens.access_token)))!.token;
    const res = await postAs(t, '/oauth/introspect', { token: tokens.access_token }, resourceServer);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    const user = await t.storage.users.findOrCreate(
      { identifier: t.provider.userUrl('alice'), provider: 'openid' },
      'unused',
      0,
    );
    expect(res.body).toEqual({
      active: true,
      scope: 'realms',
      client_id: 'code-client',
      token_type: 'Bearer',
      iat: Math.floor(stored.createdAt / 1000),
      exp: Math.floor(stored.expiresAt! / 1000),
      sub: user.id,
      subject_kind: 'user',
      iss: t.baseUrl,
    });
  });

  test(`answers active:false once the token expired, was revoked, or is unknown${suffix}`, async () => {
    const { t, resourceServer } = ctx;
    const introspect = (token: string) => postAs(t, '/oauth/introspect', { token }, resourceServer);
    expect((await introspect('unknown')).body).toEqual({ active: false });

    const expiring = await obtainTokens(t);
    const expiresAt = (await t.storage.tokens.find(hashSecret(expiring.access_token)))!.token.expiresAt!;
    stoppedAt = expiresAt - 1;
    expect((await introspect(expiring.access_token)).body.active).toBe(true);
    expect((await callRealms(t, expiring.access_token)).status).toBe(200);
    stoppedAt = expiresAt;
    // The same instant requireBearer stops accepting it.
    expect((await callRealms(t, expiring.access_token)).status).toBe(401);
    expect((await introspect(expiring.access_token)).body).toEqual({ active: false });

    const revoked = await obtainTokens(t);
    expect((await introspect(revoked.access_token)).body.active).toBe(true);
    await postAs(t, '/oauth/revoke', { token: revoked.refresh_token });
    expect((await introspect(revoked.access_token)).body).toEqual({ active: false });
    expect((await introspect(revoked.refresh_token)).body).toEqual({ active: false });
  });

  test(`describes a refresh token, and a rotated-away one as inactive${suffix}`, async () => {
    const { t } = ctx;
    const tokens = await obtainTokens(t);
    const res = await postAs(t, '/oauth/introspect', {
      token: tokens.refresh_token,
      token_type_hint: 'refresh_token',
    });
    expect(res.body).toMatchObject({ active: true, client_id: 'code-client', iss: t.baseUrl });
    expect(res.body).not.toHaveProperty('exp');
    expect(res.body).not.toHaveProperty('token_type');

    // Found without the hint (and with a wrong one) too.
    const unhinted = await postAs(t, '/oauth/introspect', {
      token: tokens.refresh_token,
      token_type_hint: 'access_token',
    });
    expect(unhinted.body.active).toBe(true);

    const rotated = await refreshWith(t, tokens.refresh_token);
    expect(rotated.status).toBe(200);
    expect((await postAs(t, '/oauth/introspect', { token: tokens.refresh_token })).body).toEqual({
      active: false,
    });
    expect((await postAs(t, '/oauth/introspect', { token: rotated.body.refresh_token })).body.active).toBe(
      true,
    );
  });

  test(`lets a client see its own tokens only, never another client's${suffix}`, async () => {
    const { t, otherClient } = ctx;
    const tokens = await obtainTokens(t);
    const own = await postAs(t, '/oauth/introspect', { token: tokens.access_token });
    expect(own.body).toMatchObject({ active: true, client_id: 'code-client' });
    for (const token of [tokens.access_token, tokens.refresh_token]) {
      const foreign = await postAs(t, '/oauth/introspect', { token }, otherClient);
      expect(foreign.status).toBe(200);
      expect(foreign.body).toEqual({ active: false });
    }
  });
});

describe('token introspection: callers and requests', () => {
  let ctx: Awaited<ReturnType<typeof setUp>>;
  beforeEach(async () => {
    ctx = await setUp();
  });
  afterEach(() => ctx.t.close());

  it('lets a resource server see implicit tokens, which no client can introspect', async () => {
    const { t, resourceServer } = ctx;
    const consent = await authorizeWithLogin(t, {
      response_type: 'token',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
      state: 's',
    });
    const token = redirectParams(
      (await answerConsent(t, consent.text, 'allow')).headers.location!,
    ).access_token!;
    const res = await t.agent
      .post('/oauth/introspect')
      .set('Authorization', basicAuth(resourceServer.clientId, resourceServer.clientSecret))
      .type('form')
      .send({ token });
    expect(res.body).toMatchObject({ active: true, client_id: 'implicit-client', token_type: 'Bearer' });
    // The implicit client has no secret, so it cannot authenticate here.
    expectOAuthError(
      await t.agent.post('/oauth/introspect').type('form').send({ client_id: 'implicit-client', token }),
      'invalid_client',
      401,
    );
  });

  it('answers active:false for the tokens of a disabled client', async () => {
    const storage = memoryStorage();
    const { t, resourceServer } = await setUp(storage);
    try {
      const tokens = await obtainTokens(t);
      const introspect = () => postAs(t, '/oauth/introspect', { token: tokens.access_token }, resourceServer);
      expect((await introspect()).body.active).toBe(true);
      await storage.clients.update('code-client', { disabled: true });
      expect((await introspect()).body).toEqual({ active: false });
    } finally {
      await t.close();
    }
  });

  it('refuses unauthenticated callers with 401 invalid_client', async () => {
    const { t, resourceServer } = ctx;
    const tokens = await obtainTokens(t);
    for (const body of [
      { token: tokens.access_token },
      { client_id: resourceServer.clientId, client_secret: 'wrong', token: tokens.access_token },
    ]) {
      const res = await t.agent.post('/oauth/introspect').type('form').send(body);
      expectOAuthError(res, 'invalid_client', 401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
      expect(res.body).not.toHaveProperty('active');
    }
  });

  it('refuses malformed requests with invalid_request', async () => {
    const { t } = ctx;
    expectOAuthError(await postAs(t, '/oauth/introspect', {}), 'invalid_request');
    const { clientId, clientSecret } = t.codeClient;
    expectOAuthError(
      await t.agent
        .post('/oauth/introspect')
        .type('form')
        .send(`client_id=${clientId}&client_secret=${clientSecret}&token=a&token=b`),
      'invalid_request',
    );
    expectOAuthError(
      await t.agent
        .post('/oauth/introspect')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ client_id: clientId, client_secret: clientSecret, token: 'a' })),
      'invalid_request',
    );
    const get = await t.agent.get('/oauth/introspect');
    expectOAuthError(get, 'invalid_request');
    expect(get.headers.allow).toBe('POST');
  });

  it('refuses a resourceServers option that is not a list of client ids', () => {
    expect(() =>
      introspectionRouter(ctx.t.server, { resourceServers: 'realms-api' as unknown as string[] }),
    ).toThrow(/resourceServers: must be an array of client ids/);
  });
});
