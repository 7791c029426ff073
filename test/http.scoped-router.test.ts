import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import {
  applicationsRouter,
  authorizeRouter,
  createAuthorizationServer,
  discoveryRouter,
  introspectionRouter,
  memoryStorage,
  metadataRouter,
  oauthRouter,
  type OAuthRouterOptions,
  revocationRouter,
  tokenRouter,
} from '../src/index.js';
import { pathsUnder, scopedRouter, type DirectRoute } from '../src/http/scoped-router.js';

/**
 * Every router hands requests it does not serve straight on (src/http/scoped-router.ts); these
 * tests check that it still serves all of its own, spelled as Express would match them.
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

describe('a direct route', () => {
  function appWith(handle: DirectRoute['handle']) {
    const router = scopedRouter(pathsUnder('/thing'), {
      method: 'POST',
      path: '/thing',
      handle,
      errors: (err, _req, res, _next) => res.status(418).json({ error: (err as Error).message }),
    });
    router.all('/thing', (req, res) => res.status(299).json({ stack: req.method }));
    router.use((err: Error, _req: Request, res: Response, _next: NextFunction) =>
      res.status(500).json({ stackError: err.message }),
    );
    const app = express();
    app.use(router);
    app.use((_req, res) => res.status(404).end());
    return app;
  }

  it('answers its method and path in any case and with a trailing slash, and nothing else', async () => {
    const app = appWith((_req, res) => void res.status(200).json({ direct: true }));
    for (const path of ['/thing', '/THING', '/Thing/', '/thing?x=1']) {
      expect((await request(app).post(path)).body, path).toEqual({ direct: true });
    }
    expect((await request(app).get('/thing')).body).toEqual({ stack: 'GET' });
    expect((await request(app).post('/thing/more')).status).toBe(404);
    expect((await request(app).post('/thingy')).status).toBe(404);
  });

  it('hands the request to the stack on next(), and its errors, thrown or rejected, to its handler', async () => {
    expect((await request(appWith((_req, _res, next) => next())).post('/thing')).body).toEqual({
      stack: 'POST',
    });
    const thrown = appWith(() => {
      throw new Error('thrown');
    });
    expect((await request(thrown).post('/thing')).body).toEqual({ error: 'thrown' });
    const rejected = appWith(async () => {
      await Promise.resolve();
      throw new Error('rejected');
    });
    const res = await request(rejected).post('/thing');
    expect(res.status).toBe(418);
    expect(res.body).toEqual({ error: 'rejected' });
    // As Express does for a promise rejected without a reason.
    const empty = appWith(() => Promise.reject(undefined));
    expect((await request(empty).post('/thing')).body).toEqual({ error: 'Rejected promise' });
  });

  it('takes HEAD when its method is GET, as an Express route does', async () => {
    const seen: string[] = [];
    const router = scopedRouter(pathsUnder('/page'), {
      method: 'GET',
      path: '/page',
      handle: (req, res) => {
        seen.push(req.method);
        res.status(204).end();
      },
      errors: (_err, _req, res) => res.status(500).end(),
    });
    const app = express().use(router);
    expect((await request(app).head('/page')).status).toBe(204);
    expect((await request(app).get('/page')).status).toBe(204);
    expect(seen).toEqual(['HEAD', 'GET']);
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
