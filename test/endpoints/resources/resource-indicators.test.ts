import type { Response } from 'express';
import supertest from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  bearerOf,
  createAuthorizationServer,
  memoryStorage,
  requireBearer,
  type AuthorizationServerOptions,
} from '../../../src/index.js';
import { introspectionRouter } from '../../../src/endpoints/routers.js';
import { createTestApp, redirectParams, type TestApp } from '../../support/app.js';
import {
  answerConsent,
  authorizeWithLogin,
  exchangeCode,
  obtainCode,
  refreshWith,
} from '../../support/flow.js';
import { answerDevice, pollToken, registerDeviceClient, requestDeviceCode } from '../../support/device.js';

// The demo's shape: the API at the origin is the default resource, an MCP server is a second one.
let t: TestApp;
let api: string;
let mcp: string;

beforeAll(async () => {
  t = await createTestApp((baseUrl) => ({
    scopes: { realms: 'List your realms', profile: 'See your name' },
    resources: [
      { resource: baseUrl, name: 'Realms API', default: true },
      { resource: `${baseUrl}/mcp`, name: 'Realms MCP server', scopes: ['realms'] },
    ],
  }));
  api = t.baseUrl;
  mcp = `${t.baseUrl}/mcp`;
  t.app.all('/mcp', requireBearer(t.server, { resource: mcp, scopes: ['realms'] }), (_req, res: Response) => {
    res.json({ resource: bearerOf(res).resource, user: bearerOf(res).userId });
  });
  t.app.post('/mcp-admin', requireBearer(t.server, { resource: mcp, scopes: ['profile'] }), (_req, res) => {
    res.json({ ok: true });
  });
  t.app.use(introspectionRouter(t.server));
});
afterAll(() => t.close());
// A new browser for each test: each signs in, and is asked for consent where the user must be.
beforeEach(() => {
  t.agent = supertest.agent(t.baseUrl);
});

const host = () => new URL(t.baseUrl).host;
const metadataOf = (resource: string) =>
  resource === api
    ? `${t.baseUrl}/.well-known/oauth-protected-resource`
    : `${t.baseUrl}/.well-known/oauth-protected-resource/mcp`;

/** A code flow for `resource` (none: the request names none), exchanged: the token response. */
async function tokensFor(resource?: string, exchangeResource?: string, scope?: string) {
  const extra: Record<string, string> = {
    ...(resource === undefined ? {} : { resource }),
    ...(scope === undefined ? {} : { scope }),
  };
  const { code } = await obtainCode(t, extra);
  const res = await exchangeCode(
    t,
    code,
    exchangeResource === undefined ? {} : { resource: exchangeResource },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { access_token: string; refresh_token: string };
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('protected resource metadata (RFC 9728)', () => {
  it('serves each declared resource at its well-known URL, naming this issuer byte for byte', async () => {
    const issuer = (await supertest(t.app).get('/.well-known/oauth-authorization-server')).body.issuer;
    const forMcp = await supertest(t.app).get('/.well-known/oauth-protected-resource/mcp');
    expect(forMcp.status).toBe(200);
    expect(forMcp.body).toEqual({
      resource: mcp,
      authorization_servers: [issuer],
      scopes_supported: ['realms'],
      bearer_methods_supported: ['header'],
      resource_name: 'Realms MCP server',
    });
    const forApi = await supertest(t.app).get('/.well-known/oauth-protected-resource');
    expect(forApi.status).toBe(200);
    expect(forApi.body.resource).toBe(api);
    expect(forApi.body.authorization_servers).toEqual([issuer]);
    // Scopes not declared for it: those the server offers.
    expect(forApi.body.scopes_supported).toEqual(expect.arrayContaining(['realms', 'profile']));
    expect((await supertest(t.app).get('/.well-known/oauth-protected-resource/other')).status).toBe(404);
  });
});

describe('requireBearer for a declared resource', () => {
  it('answers 401 naming the resource metadata and the scope the route needs, for every method', async () => {
    for (const method of ['get', 'post', 'delete'] as const) {
      const res = await supertest(t.app)[method]('/mcp');
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(
        `Bearer realm="${host()}", scope="realms", resource_metadata="${metadataOf(mcp)}"`,
      );
    }
  });

  it('answers 403 insufficient_scope with the scope and the resource metadata', async () => {
    const { access_token } = await tokensFor(mcp, undefined, 'realms');
    const res = await supertest(t.app).post('/mcp-admin').set(bearer(access_token));
    expect(res.status).toBe(403);
    expect(res.headers['www-authenticate']).toBe(
      `Bearer realm="${host()}", error="insufficient_scope", error_description="The access token lacks a required scope.", scope="profile", resource_metadata="${metadataOf(mcp)}"`,
    );
  });
});

describe('resource indicators (RFC 8707)', () => {
  it('binds a token to the resource asked for: it works there and nowhere else', async () => {
    const { access_token } = await tokensFor(mcp);
    const atMcp = await supertest(t.app).post('/mcp').set(bearer(access_token));
    expect(atMcp.status).toBe(200);
    expect(atMcp.body.resource).toBe(mcp);
    const atApi = await supertest(t.app).get('/v1/realms').set(bearer(access_token));
    expect(atApi.status).toBe(401);
    expect(atApi.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(atApi.headers['www-authenticate']).toContain(`resource_metadata="${metadataOf(api)}"`);
    const introspected = await supertest(t.app).post('/oauth/introspect').type('form').send({
      token: access_token,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
    });
    expect(introspected.body).toMatchObject({ active: true, aud: mcp });
  });

  it('gives a request that names no resource a token for the default one only', async () => {
    const { access_token } = await tokensFor();
    expect((await supertest(t.app).get('/v1/realms').set(bearer(access_token))).status).toBe(200);
    const atMcp = await supertest(t.app).post('/mcp').set(bearer(access_token));
    expect(atMcp.status).toBe(401);
    expect(atMcp.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('takes an origin with or without its trailing slash as one resource', async () => {
    const { access_token } = await tokensFor(`${api}/`, `${api}/`);
    expect((await supertest(t.app).get('/v1/realms').set(bearer(access_token))).status).toBe(200);
    const introspected = await supertest(t.app).post('/oauth/introspect').type('form').send({
      token: access_token,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
    });
    expect(introspected.body.aud).toBe(api);
  });

  it.each([
    ['an unknown resource', 'https://elsewhere.example/api'],
    ['a resource with a fragment', `${'https://x.example/mcp'}#frag`],
    ['a relative reference', '/mcp'],
  ])(
    'refuses %s at the authorization endpoint with invalid_target, carrying iss',
    async (_name, resource) => {
      const res = await t.agent.get('/oauth/authorize').query({
        response_type: 'code',
        client_id: t.codeClient.clientId,
        redirect_uri: 'https://client.example/cb',
        state: 's1',
        resource,
      });
      expect(res.status).toBe(302);
      const params = redirectParams(res.headers.location!);
      expect(params).toMatchObject({ error: 'invalid_target', state: 's1', iss: t.server.urls.issuer });
    },
  );

  it('refuses a repeated resource with invalid_target', async () => {
    const res = await t.agent.get(
      `/oauth/authorize?response_type=code&client_id=${t.codeClient.clientId}&redirect_uri=${encodeURIComponent('https://client.example/cb')}&resource=${encodeURIComponent(mcp)}&resource=${encodeURIComponent(api)}`,
    );
    expect(res.status).toBe(302);
    expect(redirectParams(res.headers.location!).error).toBe('invalid_target');
  });

  it('refuses at the token endpoint a resource the code was not issued for (400 invalid_target)', async () => {
    const { code } = await obtainCode(t, { resource: mcp });
    const wider = await exchangeCode(t, code, { resource: api });
    expect(wider.status).toBe(400);
    expect(wider.body.error).toBe('invalid_target');
    // The code is still good: the refusal consumed nothing.
    const right = await exchangeCode(t, code, { resource: mcp });
    expect(right.status).toBe(200);
  });

  it('refuses a repeated resource at the token and device endpoints with invalid_target', async () => {
    const { refresh_token } = await tokensFor(mcp);
    const body = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
    });
    body.append('resource', mcp);
    body.append('resource', api);
    const res = await t.agent.post('/oauth/token').type('form').send(body.toString());
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_target');
    const device = await t.agent
      .post('/oauth/device_authorization')
      .type('form')
      .send(`client_id=realm-cli&resource=${encodeURIComponent(mcp)}&resource=${encodeURIComponent(api)}`);
    expect(device.status).toBe(400);
    expect(device.body.error).toBe('invalid_target');
  });

  it('lets a refresh name the resource it was granted, never another', async () => {
    const { refresh_token } = await tokensFor(mcp);
    const same = await refreshWith(t, refresh_token, { resource: mcp });
    expect(same.status).toBe(200);
    expect((await supertest(t.app).post('/mcp').set(bearer(same.body.access_token))).status).toBe(200);
    const other = await refreshWith(t, refresh_token, { resource: api });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('invalid_target');
    const none = await refreshWith(t, refresh_token);
    expect(none.status).toBe(200);
    expect((await supertest(t.app).post('/mcp').set(bearer(none.body.access_token))).status).toBe(200);
  });

  it('asks for consent again for a resource the user has not trusted the client with, and names it', async () => {
    const user = 'resource-consent-user';
    const first = await authorizeWithLogin(
      t,
      {
        response_type: 'code',
        client_id: t.codeClient.clientId,
        redirect_uri: 'https://client.example/cb',
        state: 'a',
      },
      user,
    );
    expect(first.status).toBe(200);
    expect(first.text).toContain('Realms API');
    expect((await answerConsent(t, first.text, 'allow')).status).toBe(303);
    const again = await t.agent.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: 'https://client.example/cb',
      state: 'b',
      resource: mcp,
    });
    expect(again.status).toBe(200);
    expect(again.text).toContain('Realms MCP server');
  });

  it("refuses a resource the client is not allowed, and a request without one when the default isn't", async () => {
    await t.storage.clients.update!(t.codeClient.clientId, { resources: [mcp] });
    try {
      const query = {
        response_type: 'code',
        client_id: t.codeClient.clientId,
        redirect_uri: 'https://client.example/cb',
        state: 'c',
      };
      const named = await t.agent.get('/oauth/authorize').query({ ...query, resource: api });
      expect(redirectParams(named.headers.location!).error).toBe('invalid_target');
      const unnamed = await t.agent.get('/oauth/authorize').query(query);
      expect(redirectParams(unnamed.headers.location!).error).toBe('invalid_target');
    } finally {
      await t.storage.clients.update!(t.codeClient.clientId, { resources: [] });
    }
  });
});

describe('a resource the operator takes from the client', () => {
  it('stops working at once: its tokens at the resource, and refreshes for it', async () => {
    const { access_token, refresh_token } = await tokensFor(mcp);
    await t.storage.clients.update!(t.codeClient.clientId, { resources: [api] });
    try {
      const atMcp = await supertest(t.app).post('/mcp').set(bearer(access_token));
      expect(atMcp.status).toBe(401);
      expect(atMcp.headers['www-authenticate']).toContain('error="invalid_token"');
      const refreshed = await refreshWith(t, refresh_token);
      expect(refreshed.status).toBe(400);
      expect(refreshed.body.error).toBe('invalid_target');
    } finally {
      await t.storage.clients.update!(t.codeClient.clientId, { resources: [] });
    }
    expect((await supertest(t.app).post('/mcp').set(bearer(access_token))).status).toBe(200);
  });
});

describe('the device flow with a resource', () => {
  it('binds the device tokens to the resource asked for, and refuses an unknown one', async () => {
    await registerDeviceClient(t.storage);
    const unknown = await requestDeviceCode(t, {
      client_id: 'realm-cli',
      resource: 'https://elsewhere.example/',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('invalid_target');
    const started = await requestDeviceCode(t, { client_id: 'realm-cli', resource: mcp });
    expect(started.status).toBe(200);
    const { consent } = await answerDevice(t, started.body.user_code, 'allow', 'device-resource-user');
    expect(consent).toContain('Realms MCP server');
    const wider = await pollToken(t, {
      client_id: 'realm-cli',
      device_code: started.body.device_code,
      resource: api,
    });
    expect(wider.body.error).toBe('invalid_target');
    const tokens = await pollToken(t, { client_id: 'realm-cli', device_code: started.body.device_code });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect((await supertest(t.app).post('/mcp').set(bearer(tokens.body.access_token))).status).toBe(200);
    expect((await supertest(t.app).get('/v1/realms').set(bearer(tokens.body.access_token))).status).toBe(401);
  });
});

describe('declaring resources', () => {
  const base = {
    baseUrl: 'https://auth.example.com',
    providers: [{ name: 'Example', identifier: 'https://id.example.com/' }],
    session: { secret: 'x'.repeat(32) },
    scopes: { realms: 'List your realms' },
  };
  const build = (resources: AuthorizationServerOptions['resources']) =>
    createAuthorizationServer({ ...base, storage: memoryStorage(), resources });

  it.each([
    [
      'one resource twice (an origin with and without its slash)',
      [{ resource: 'https://api.example.com' }, { resource: 'https://api.example.com/' }],
      'resources.1: "https://api.example.com/" is declared twice',
    ],
    [
      'two defaults',
      [
        { resource: 'https://api.example.com', default: true },
        { resource: 'https://api.example.com/mcp', default: true },
      ],
      'resources.1: only one resource may be the default (resources.0 is)',
    ],
    [
      'a scope the server does not offer',
      [{ resource: 'https://api.example.com', scopes: ['realms:write'] }],
      'resources.0: scope "realms:write" is not one the server offers',
    ],
    ['a URL with a fragment', [{ resource: 'https://api.example.com/#x' }], 'resources.0.resource'],
    ['a relative URL', [{ resource: '/mcp' }], 'resources.0.resource'],
  ])('refuses %s when the server is built', (_name, resources, message) => {
    expect(() => build(resources)).toThrow(message);
  });

  it('refuses a requireBearer resource the server does not declare', () => {
    const server = build([{ resource: 'https://api.example.com/mcp' }]);
    expect(() => requireBearer(server, { resource: 'https://api.example.com/other' })).toThrow(
      'requireBearer resource: "https://api.example.com/other" is not one of the server\'s resources',
    );
  });

  it('serves no resource metadata, and ignores resource, when none is declared', async () => {
    const plain = await createTestApp();
    try {
      expect((await supertest(plain.app).get('/.well-known/oauth-protected-resource')).status).toBe(404);
      const { code } = await obtainCode(plain, { resource: 'https://anything.example/' });
      const res = await exchangeCode(plain, code, { resource: 'https://anything.example/' });
      expect(res.status).toBe(200);
      const api = await supertest(plain.app).get('/v1/realms').set(bearer(res.body.access_token));
      expect(api.status).toBe(200);
      expect((await supertest(plain.app).get('/v1/realms')).headers['www-authenticate']).toBe(
        `Bearer realm="${new URL(plain.baseUrl).host}"`,
      );
    } finally {
      await plain.close();
    }
  });
});

describe('UserInfo with resources declared', () => {
  it('takes a token of the default resource, not one of another resource (an MCP server cannot read claims with it)', async () => {
    const o = await createTestApp((baseUrl) => ({
      scopes: { realms: 'List your realms' },
      oidc: { keySecret: 'an-oidc-key-secret-of-at-least-32-chars' },
      resources: [
        { resource: baseUrl, default: true },
        { resource: `${baseUrl}/mcp`, scopes: ['realms'] },
      ],
    }));
    try {
      await o.storage.clients.update!(o.codeClient.clientId, { scopes: ['openid', 'realms', 'profile'] });
      const tokenOf = async (extra: Record<string, string>) => {
        const { code } = await obtainCode(o, { scope: 'openid realms', ...extra });
        const res = await exchangeCode(o, code);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body.access_token as string;
      };
      const forApi = await tokenOf({});
      expect((await supertest(o.app).get('/oauth/userinfo').set(bearer(forApi))).status).toBe(200);
      o.agent = supertest.agent(o.baseUrl);
      const forMcp = await tokenOf({ resource: `${o.baseUrl}/mcp` });
      const refused = await supertest(o.app).get('/oauth/userinfo').set(bearer(forMcp));
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toContain('error="invalid_token"');
    } finally {
      await o.close();
    }
  });
});
