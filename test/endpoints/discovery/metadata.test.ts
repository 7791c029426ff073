/**
 * Authorization server metadata (RFC 8414) at /.well-known/oauth-authorization-server: checked
 * against the fields RFC 8414 section 2 requires and recommends, with every URL absolute, https
 * or loopback, and built from baseUrl; and at the RFC 8414 3 location for an issuer with a path.
 */
import express from 'express';
import supertest from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  authorizeRouter,
  createAuthorizationServer,
  discoveryRouter,
  memoryStorage,
  metadataRouter,
  tokenRouter,
} from '../../../src/index.js';
import { authorizationServerMetadata } from '../../../src/endpoints/discovery/metadata.js';
import { introspectionRouter, revocationRouter } from '../../../src/endpoints/routers.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { mountClientEndpoints } from '../../support/endpoints.js';

const WELL_KNOWN = '/.well-known/oauth-authorization-server';

/** RFC 8414 2: REQUIRED, and REQUIRED here because grants other than implicit are supported. */
const REQUIRED = ['issuer', 'response_types_supported', 'authorization_endpoint', 'token_endpoint'];
/** RFC 8414 2: RECOMMENDED (registration_endpoint only with dynamicRegistration on: off by default). */
const RECOMMENDED = ['scopes_supported'];
const URL_FIELDS = [
  'issuer',
  'authorization_endpoint',
  'token_endpoint',
  'revocation_endpoint',
  'introspection_endpoint',
];

/** Checks a metadata document against RFC 8414 and the library's promises. */
function expectValidMetadata(doc: Record<string, unknown>, baseUrl: string): void {
  const issuer = baseUrl.replace(/\/+$/, '');
  for (const field of [...REQUIRED, ...RECOMMENDED]) expect(doc, field).toHaveProperty(field);
  expect(doc.issuer).toBe(issuer);
  // RFC 8414 2: the issuer is a URL with no query or fragment; https (loopback http for tests).
  const parsedIssuer = new URL(doc.issuer as string);
  expect(parsedIssuer.search + parsedIssuer.hash).toBe('');
  for (const field of URL_FIELDS) {
    const value = doc[field] as string;
    expect(typeof value, field).toBe('string');
    const url = new URL(value);
    const loopback = url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
    expect(url.protocol === 'https:' || loopback, `${field} is https or loopback: ${value}`).toBe(true);
    expect(value === issuer || value.startsWith(`${issuer}/`), `${field} is built from baseUrl`).toBe(true);
  }
  expect(doc).toMatchObject({
    response_types_supported: ['code', 'token'],
    grant_types_supported: expect.arrayContaining(['authorization_code', 'implicit', 'refresh_token']),
    token_endpoint_auth_methods_supported: expect.arrayContaining([
      'client_secret_basic',
      'client_secret_post',
    ]),
    revocation_endpoint_auth_methods_supported: expect.arrayContaining(['client_secret_basic']),
    introspection_endpoint_auth_methods_supported: expect.arrayContaining(['client_secret_basic']),
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  });
  // Public clients (native apps, devices) name themselves with client_id alone at the token
  // endpoint; introspection stays for confidential clients.
  expect(doc.token_endpoint_auth_methods_supported).toContain('none');
  expect(doc.introspection_endpoint_auth_methods_supported).not.toContain('none');
  expect(doc.device_authorization_endpoint).toBe(`${doc.issuer}/oauth/device_authorization`);
  expect(doc.grant_types_supported).toContain('urn:ietf:params:oauth:grant-type:device_code');
}

describe('metadata of an issuer at the origin root', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ scopes: { realms: 'See your realms', profile: 'See your profile' } });
    mountClientEndpoints(t);
  });
  afterEach(() => t.close());

  it('is served next to the root resource by discoveryRouter, whatever the Host header says', async () => {
    const res = await t.agent.get(WELL_KNOWN).set('Host', 'evil.example');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expectValidMetadata(res.body, t.baseUrl);
    expect(res.body.scopes_supported).toEqual(['realms', 'profile']);
    expect(res.body).not.toHaveProperty('service_documentation');
    // RFC 8414 3.3: the issuer is the one whose well-known URL was fetched.
    expect(`${res.body.issuer}${WELL_KNOWN}`).toBe(`${t.baseUrl}${WELL_KNOWN}`);
    expect((await t.agent.head(WELL_KNOWN)).status).toBe(200);
  });

  it('advertises endpoints that answer: each refuses an empty request as an OAuth endpoint would', async () => {
    const doc = (await t.agent.get(WELL_KNOWN)).body;
    const path = (url: string) => new URL(url).pathname;
    expect((await t.agent.get(path(doc.authorization_endpoint))).status).toBe(400);
    for (const field of ['token_endpoint', 'revocation_endpoint', 'introspection_endpoint']) {
      const res = await t.agent.post(path(doc[field])).type('form').send({});
      expect([400, 401], field).toContain(res.status);
      expect(res.body.error, field).toMatch(/^invalid_(request|client)$/);
    }
  });
});

describe('metadata of an issuer with a path (RFC 8414 3)', () => {
  const options = {
    baseUrl: 'https://auth.example.com/tenant/one',
    storage: memoryStorage(),
    providers: [{ name: 'Example', identifier: 'https://id.example.com/' }],
    session: { secret: 'x'.repeat(32) },
    scopes: { realms: 'See your realms' },
  };

  it('is served by metadataRouter at the origin root, the well-known segment before the path', async () => {
    const server = createAuthorizationServer(options);
    const app = express();
    app.use(metadataRouter(server));
    app.use(
      '/tenant/one',
      discoveryRouter(server),
      authorizeRouter(server),
      tokenRouter(server),
      revocationRouter(server),
      introspectionRouter(server),
    );
    expect(server.urls.metadata).toBe(`https://auth.example.com${WELL_KNOWN}/tenant/one`);

    const res = await supertest(app).get(`${WELL_KNOWN}/tenant/one`);
    expect(res.status).toBe(200);
    expectValidMetadata(res.body, options.baseUrl);
    expect(res.body.token_endpoint).toBe('https://auth.example.com/tenant/one/oauth/token');
    expect(res.body.scopes_supported).toEqual(['realms']);

    // Not at the places RFC 8414 does not define, nor for another issuer's path.
    expect((await supertest(app).get(`/tenant/one${WELL_KNOWN}`)).status).toBe(404);
    expect((await supertest(app).get(WELL_KNOWN)).status).toBe(404);
    expect((await supertest(app).get(`${WELL_KNOWN}/tenant`)).status).toBe(404);
    expect((await supertest(app).post(`${WELL_KNOWN}/tenant/one`)).status).toBe(404);
  });

  it('takes a path with characters Express would read as a pattern literally', async () => {
    const server = createAuthorizationServer({ ...options, baseUrl: 'https://auth.example.com/a:b/*' });
    const app = express().use(metadataRouter(server));
    expect((await supertest(app).get(`${WELL_KNOWN}/a:b/*`)).body.issuer).toBe(
      'https://auth.example.com/a:b/*',
    );
    expect((await supertest(app).get(`${WELL_KNOWN}/anything/x`)).status).toBe(404);
  });
});

describe('metadata options', () => {
  const server = createAuthorizationServer({
    baseUrl: 'https://auth.example.com',
    storage: memoryStorage(),
    providers: [{ name: 'Example', identifier: 'https://id.example.com/' }],
    session: { secret: 'x'.repeat(32) },
  });

  it('leaves out endpoints the host does not mount, and adds service_documentation', () => {
    const doc = authorizationServerMetadata(server, {
      revocation: false,
      introspection: false,
      serviceDocumentation: 'https://docs.example.com/oauth',
    });
    for (const field of [
      'revocation_endpoint',
      'revocation_endpoint_auth_methods_supported',
      'introspection_endpoint',
      'introspection_endpoint_auth_methods_supported',
    ]) {
      expect(doc).not.toHaveProperty(field);
    }
    expect(doc.service_documentation).toBe('https://docs.example.com/oauth');
    expect(doc.issuer).toBe('https://auth.example.com');
    // No configured scopes: scopes_supported (only RECOMMENDED) is left out rather than listed empty.
    expect(doc).not.toHaveProperty('scopes_supported');
  });

  it('refuses a service_documentation that is not an absolute http(s) URL', () => {
    for (const serviceDocumentation of ['docs', 'javascript:alert(1)']) {
      expect(() => metadataRouter(server, { serviceDocumentation })).toThrow(
        /serviceDocumentation: must be an absolute http\(s\) URL/,
      );
    }
  });
});
