/**
 * examples/jwt-resource-server.mjs, run as a real child process (plain `node`, jose and nothing
 * of the library), takes the JWT access tokens of the resource it is and nothing else: a token
 * for another resource, an opaque token, garbage and no token get 401. A token revoked at the
 * authorization server still works there until it expires: the caveat the docs state.
 */
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revocationRouter } from '../../src/endpoints/routers.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { basicAuth, exchangeCode, obtainCode } from '../support/flow.js';
import { freePort, ROOT, runProgram, type RunningExample } from './run-example.js';

let t: TestApp;
let example: RunningExample;
let port: number;

beforeAll(async () => {
  t = await createTestApp((baseUrl) => ({
    scopes: { realms: 'List your realms', profile: 'See your name' },
    oidc: { keySecret: 'a-key-secret-of-at-least-32-characters!!' },
    resources: [
      { resource: baseUrl, default: true, accessTokenFormat: 'jwt', accessTokenTtl: 600 },
      { resource: `${baseUrl}/other`, accessTokenFormat: 'jwt' },
      { resource: `${baseUrl}/opaque` },
    ],
  }));
  t.app.use(revocationRouter(t.server));
  port = await freePort();
  example = runProgram('jwt-resource-server.mjs', ['examples/jwt-resource-server.mjs'], ROOT, {
    ISSUER: t.baseUrl,
    AUDIENCE: t.baseUrl,
    PORT: String(port),
  });
  await example.waitFor(/JWT resource server for/, 30_000);
}, 60_000);
afterAll(async () => {
  await example?.stop();
  await t?.close();
});

async function accessTokenFor(resource?: string): Promise<string> {
  t.agent = supertest.agent(t.baseUrl);
  const { code } = await obtainCode(t, { scope: 'realms', ...(resource ? { resource } : {}) });
  const res = await exchangeCode(t, code);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.access_token as string;
}

const whoami = (token?: string) =>
  fetch(
    `http://127.0.0.1:${port}/whoami`,
    token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } },
  );

describe('a resource server elsewhere, with jose and the JWKS alone', () => {
  it('takes a JWT access token of its resource, and says whom it speaks for', async () => {
    const res = await whoami(await accessTokenFor());
    expect(res.status, example.output()).toBe(200);
    expect(await res.json()).toMatchObject({
      sub: expect.any(String),
      client_id: t.codeClient.clientId,
      scopes: ['realms'],
      member: true,
    });
  });

  it('refuses a token for another resource, an opaque token, garbage and no token', async () => {
    for (const token of [
      await accessTokenFor(`${t.baseUrl}/other`),
      await accessTokenFor(`${t.baseUrl}/opaque`),
      'not.a.token',
      undefined,
    ]) {
      const res = await whoami(token);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('invalid_token');
    }
  });

  it('still takes a token revoked at the authorization server, until it expires (the documented caveat)', async () => {
    const token = await accessTokenFor();
    await supertest(t.app)
      .post('/oauth/revoke')
      .set('Authorization', basicAuth(t.codeClient.clientId, t.codeClient.clientSecret))
      .type('form')
      .send({ token })
      .expect(200);
    expect((await supertest(t.app).get('/v1/realms').set('Authorization', `Bearer ${token}`)).status).toBe(
      401,
    );
    expect((await whoami(token)).status).toBe(200);
  });
});
