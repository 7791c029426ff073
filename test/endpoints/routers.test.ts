import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import {
  authorizeRouter,
  createAuthorizationServer,
  discoveryRouter,
  memoryStorage,
  metadataRouter,
  oauthRouter,
  type OAuthRouterOptions,
  tokenRouter,
} from '../../src/index.js';
import { applicationsRouter, introspectionRouter, revocationRouter } from '../../src/endpoints/routers.js';

/**
 * Every router hands the requests it does not serve on to the host's routes; these tests check
 * that it still serves all of its own, spelled as Express would match them.
 */
function hostAppWith(mount = '', combined: OAuthRouterOptions | false = false) {
  const server = createAuthorizationServer({
    baseUrl: `http://127.0.0.1${mount}`,
    storage: memoryStorage(),
    providers: [{ name: 'Example', identifier: 'https://id.example/' }],
    session: { secret: 'a session secret long enough for the tests' },
  });
  const app = express();
  app.use(metadataRouter(server, combined || {}));
  const routers = combined
    ? [oauthRouter(server, combined)]
    : [
        discoveryRouter(server),
        authorizeRouter(server),
        tokenRouter(server),
        applicationsRouter(server),
        revocationRouter(server),
        introspectionRouter(server),
      ];
  if (mount) app.use(mount, ...routers);
  else app.use(...routers);
  app.all('/{*rest}', (req, res) => {
    res.status(299).json({ host: req.originalUrl });
  });
  return app;
}

describe.each([
  ['one by one', false],
  ['as one oauthRouter', {}],
] as const)('routers mounted %s in front of the host routes', (_how, combined) => {
  const hostApp = (mount = '') => hostAppWith(mount, combined);

  it('pass the host routes through, with their paths intact', async () => {
    for (const path of [
      '/v1/realms',
      '/oauthx/token',
      '/oauth',
      '/v1/oauth/token',
      '/?x=1',
      '/oauth/tokens',
    ]) {
      const res = await request(hostApp()).get(path);
      expect(res.status, path).toBe(path === '/?x=1' ? 200 : 299);
      if (res.status === 299) expect(res.body).toEqual({ host: path });
    }
  });

  it('serve their own paths in any case, with a query, or below the mount point', async () => {
    const app = hostApp();
    expect((await request(app).post('/OAuth/Token').type('form').send({})).status).toBe(400);
    expect((await request(app).get('/oauth/token?x=1')).body.error).toBe('invalid_request');
    expect((await request(app).get('/OAUTH/REVOKE')).status).toBe(400);
    expect((await request(app).get('/oauth/authorize/')).status).toBe(400);
    expect((await request(app).get('/')).body.oauth.token.href).toBe('http://127.0.0.1/oauth/token');
    expect((await request(app).get('/.well-known/oauth-authorization-server')).body.issuer).toBe(
      'http://127.0.0.1',
    );

    const mounted = hostApp('/auth');
    expect((await request(mounted).post('/auth/oauth/token').type('form').send({})).status).toBe(400);
    expect((await request(mounted).get('/auth')).body.oauth.token.href).toBe(
      'http://127.0.0.1/auth/oauth/token',
    );
    expect((await request(mounted).get('/oauth/token')).status).toBe(299);
    expect((await request(mounted).get('/.well-known/oauth-authorization-server/auth')).status).toBe(200);
  });
});

describe('oauthRouter options', () => {
  it('leave out the endpoints turned off, and their URLs from the metadata', async () => {
    const app = hostAppWith('', { revocation: false, introspection: false, applications: false });
    for (const path of ['/oauth/revoke', '/oauth/introspect', '/oauth/applications']) {
      expect((await request(app).post(path)).status, path).toBe(299);
    }
    const metadata = (await request(app).get('/.well-known/oauth-authorization-server')).body;
    expect(metadata.token_endpoint).toBe('http://127.0.0.1/oauth/token');
    expect(metadata).not.toHaveProperty('revocation_endpoint');
    expect(metadata).not.toHaveProperty('introspection_endpoint');
  });

  it('leave GET / to the host with discovery: false', async () => {
    const app = hostAppWith('', { discovery: false });
    expect((await request(app).get('/')).status).toBe(299);
    expect((await request(app).post('/oauth/token').type('form').send({})).status).toBe(400);
  });
});

describe('oauthRouter with an absolute-form request target (RFC 9112 3.2.2)', () => {
  it('still routes by the path: the token endpoint answers, the host route is reached', async () => {
    const app = hostAppWith('', {});
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const send = (requestLine: string, body = '') =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          // Not end(): a half-closed socket may be closed before an asynchronous answer is written.
          socket.write(
            `${requestLine}\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
              `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
          );
        });
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
      });
    try {
      const token = await send(`POST http://127.0.0.1:${port}/oauth/token HTTP/1.1`, 'grant_type=password');
      expect(token).toMatch(/^HTTP\/1\.1 400/);
      expect(token).toContain('"error":"unsupported_grant_type"');
      const host = await send(`GET http://127.0.0.1:${port}/v1/realms HTTP/1.1`);
      expect(host).toMatch(/^HTTP\/1\.1 299/);
    } finally {
      server.close();
    }
  });
});
