/**
 * JWT access tokens (RFC 9068), per resource: a resource that asks for them gets a signed token
 * that a resource server elsewhere verifies with jose and the JWKS alone (`typ: at+jwt`, the
 * issuer, its own audience), across a key rotation until its key is retired; requireBearer
 * verifies it and still reads its record, so revocation and a removed client end it on this host
 * at once; introspection answers for it; a resource left opaque keeps opaque tokens.
 */
import type { Response } from 'express';
import supertest from 'supertest';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bearerOf, requireBearer } from '../../../src/index.js';
import { introspectionRouter, revocationRouter } from '../../../src/endpoints/routers.js';
import { revokeApplication } from '../../../src/grants/index.js';
import { KEY_REFRESH_MS, RETIRE_AFTER_ROTATION_MS, retireKey, rotateKeys } from '../../../src/oidc/keys.js';
import { createTestApp, IMPLICIT_REDIRECT, redirectParams, type TestApp } from '../../support/app.js';
import {
  answerConsent,
  authorizeWithLogin,
  basicAuth,
  exchangeCode,
  obtainCode,
  refreshWith,
} from '../../support/flow.js';

const KEY_SECRET = 'a-key-secret-of-at-least-32-characters!!';
let t: TestApp;
let now = Date.now();
let api: string;
let mcp: string;
let jwksUri: string;
let issuer: string;

beforeAll(async () => {
  t = await createTestApp((baseUrl) => ({
    scopes: { realms: 'List your realms', profile: 'See your name' },
    oidc: { keySecret: KEY_SECRET },
    clock: () => now,
    resources: [
      {
        resource: baseUrl,
        name: 'Realms API',
        default: true,
        accessTokenFormat: 'jwt',
        accessTokenTtl: 3000,
      },
      { resource: `${baseUrl}/mcp`, name: 'Realms MCP server' },
    ],
  }));
  api = t.baseUrl;
  mcp = `${t.baseUrl}/mcp`;
  t.app.get('/mcp', requireBearer(t.server, { resource: mcp }), (_req, res: Response) => {
    res.json({ user: bearerOf(res).userId });
  });
  t.app.use(introspectionRouter(t.server), revocationRouter(t.server));
  const metadata = await supertest(t.app).get('/.well-known/openid-configuration').expect(200);
  jwksUri = metadata.body.jwks_uri as string;
  issuer = metadata.body.issuer as string;
});
afterAll(() => t.close());
beforeEach(() => {
  t.agent = supertest.agent(t.baseUrl);
});

/** A code flow for `resource` (none: the default one), exchanged: the token response. */
async function tokensFor(resource?: string) {
  const { code } = await obtainCode(t, {
    scope: 'realms',
    ...(resource === undefined ? {} : { resource }),
  });
  const res = await exchangeCode(t, code);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { access_token: string; refresh_token: string; expires_in: number };
}

/** Verifies as a resource server in another process would: jose, the JWKS over HTTP, nothing else. */
function verifyElsewhere(token: string, audience: string) {
  // A new key set each time: jose keeps the one it fetched for 10 minutes.
  return jwtVerify(token, createRemoteJWKSet(new URL(jwksUri)), {
    typ: 'at+jwt',
    issuer,
    audience,
    currentDate: new Date(now),
  });
}

const realms = (token: string) => supertest(t.app).get('/v1/realms').set('Authorization', `Bearer ${token}`);

const introspect = (token: string) =>
  supertest(t.app)
    .post('/oauth/introspect')
    .set('Authorization', basicAuth(t.codeClient.clientId, t.codeClient.clientSecret))
    .type('form')
    .send({ token });

describe('a resource that asks for JWT access tokens', () => {
  it('gets an RFC 9068 token: at+jwt, an asymmetric algorithm, its audience, its lifetime', async () => {
    const tokens = await tokensFor();
    expect(tokens.expires_in).toBe(3000);
    const header = decodeProtectedHeader(tokens.access_token);
    expect(header).toMatchObject({ typ: 'at+jwt', alg: 'RS256' });
    expect(header.kid).toEqual(expect.any(String));
    const { payload } = await verifyElsewhere(tokens.access_token, api);
    expect(payload).toMatchObject({
      iss: issuer,
      aud: api,
      client_id: t.codeClient.clientId,
      scope: 'realms',
      sub: expect.any(String),
      jti: expect.any(String),
      auth_time: expect.any(Number),
    });
    expect(payload.exp! - payload.iat!).toBe(3000);
    // The refresh token stays opaque: it is only ever read here.
    expect(tokens.refresh_token).not.toContain('.');
    const res = await realms(tokens.access_token);
    expect(res.status).toBe(200);
    expect(res.body.realms).toEqual([`realm-of-${payload.sub}`]);
  });

  it('fails at another resource, with jose and with requireBearer', async () => {
    const { access_token } = await tokensFor();
    await expect(verifyElsewhere(access_token, mcp)).rejects.toThrow(/aud/);
    const res = await supertest(t.app).get('/mcp').set('Authorization', `Bearer ${access_token}`);
    expect(res.status).toBe(401);
  });

  it('is no id_token_hint: signed with the same keys, but at+jwt, its audience a resource', async () => {
    const { access_token } = await tokensFor();
    for (const query of [{ id_token_hint: access_token }, { id_token_hint: access_token, client_id: api }]) {
      const res = await supertest(t.app).get('/oauth/end-session').query(query);
      expect(res.status, res.text).toBe(400);
      expect(res.text).toContain('The id_token_hint is not an ID token of this server.');
    }
  });

  it('a resource left opaque keeps opaque tokens, of the default lifetime', async () => {
    const tokens = await tokensFor(mcp);
    expect(tokens.access_token).not.toContain('.');
    expect(tokens.expires_in).toBe(3600);
    const res = await supertest(t.app).get('/mcp').set('Authorization', `Bearer ${tokens.access_token}`);
    expect(res.status).toBe(200);
  });

  it('a refresh issues a new JWT, without auth_time (the sign-in is not kept with the refresh token)', async () => {
    const first = await tokensFor();
    const res = await refreshWith(t, first.refresh_token);
    expect(res.status).toBe(200);
    const { payload } = await verifyElsewhere(res.body.access_token as string, api);
    expect(payload.auth_time).toBeUndefined();
    expect(res.body.access_token).not.toBe(first.access_token);
    expect((await realms(res.body.access_token as string)).status).toBe(200);
  });

  it("the implicit grant hands out one too, its expires_in the resource's lifetime", async () => {
    const query = {
      response_type: 'token',
      client_id: 'implicit-client',
      redirect_uri: IMPLICIT_REDIRECT,
      state: 'st',
    };
    const consent = await authorizeWithLogin(t, query);
    const answer = await answerConsent(t, consent.text, 'allow');
    const fragment = redirectParams(answer.headers.location!);
    expect(fragment.expires_in).toBe('3000');
    const { payload } = await verifyElsewhere(fragment.access_token!, api);
    expect(payload).toMatchObject({ client_id: 'implicit-client', auth_time: expect.any(Number) });
    expect((await realms(fragment.access_token!)).status).toBe(200);
  });

  it('introspection answers for it as for an opaque token', async () => {
    const { access_token } = await tokensFor();
    const { payload } = await verifyElsewhere(access_token, api);
    const res = await introspect(access_token);
    expect(res.body).toMatchObject({
      active: true,
      token_type: 'Bearer',
      client_id: t.codeClient.clientId,
      sub: payload.sub,
      aud: api,
      iss: issuer,
      exp: payload.exp,
      iat: payload.iat,
      scope: 'realms',
    });
  });

  it('revoked here, it is refused here at once, though its signature still verifies elsewhere until exp', async () => {
    const { access_token } = await tokensFor();
    expect((await realms(access_token)).status).toBe(200);
    const revoked = await supertest(t.app)
      .post('/oauth/revoke')
      .set('Authorization', basicAuth(t.codeClient.clientId, t.codeClient.clientSecret))
      .type('form')
      .send({ token: access_token });
    expect(revoked.status).toBe(200);
    const res = await realms(access_token);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('invalid_token');
    expect((await introspect(access_token)).body).toEqual({ active: false });
    // The documented caveat: a resource server that checks the signature alone still accepts it.
    await expect(verifyElsewhere(access_token, api)).resolves.toBeTruthy();
  });

  it("a grant revoked by the user, or the client disabled, ends the grant's JWTs here", async () => {
    const { access_token } = await tokensFor();
    const { payload } = await verifyElsewhere(access_token, api);
    await revokeApplication(t.server, payload.sub!, t.codeClient.clientId, 'user');
    expect((await realms(access_token)).status).toBe(401);

    t.agent = supertest.agent(t.baseUrl);
    const other = await tokensFor();
    expect((await realms(other.access_token)).status).toBe(200);
    await t.storage.clients.update!(t.codeClient.clientId, { disabled: true });
    try {
      expect((await realms(other.access_token)).status).toBe(401);
    } finally {
      await t.storage.clients.update!(t.codeClient.clientId, { disabled: false });
    }
    expect((await realms(other.access_token)).status).toBe(200);
  });

  it('keeps verifying across a key rotation until its key is retired', async () => {
    const { access_token } = await tokensFor();
    const oldKid = decodeProtectedHeader(access_token).kid!;
    const store = t.storage.keys!;
    await rotateKeys(store, KEY_SECRET, undefined, now);
    now += KEY_REFRESH_MS; // every instance has read the rotation
    const after = await tokensFor();
    expect(decodeProtectedHeader(after.access_token).kid).not.toBe(oldKid);
    await verifyElsewhere(access_token, api);
    await verifyElsewhere(after.access_token, api);
    expect((await realms(access_token)).status).toBe(200);

    now += RETIRE_AFTER_ROTATION_MS;
    await retireKey(store, oldKid, now);
    now += KEY_REFRESH_MS;
    await expect(verifyElsewhere(access_token, api)).rejects.toThrow();
    expect((await realms(access_token)).status).toBe(401);
    // Introspection says what requireBearer does.
    expect((await introspect(access_token)).body).toEqual({ active: false });
    expect((await realms(after.access_token)).status).toBe(200);
  });

  // Last: the code client is gone after it.
  it('the client removed, its JWTs are refused here', async () => {
    const { access_token } = await tokensFor();
    expect((await realms(access_token)).status).toBe(200);
    await t.storage.clients.remove!(t.codeClient.clientId);
    expect((await realms(access_token)).status).toBe(401);
    expect((await introspect(access_token)).status).toBe(401);
  });
});
