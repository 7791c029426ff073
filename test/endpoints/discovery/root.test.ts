import express from 'express';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { createAuthorizationServer, discoveryRouter, memoryStorage } from '../../../src/index.js';

const options = {
  storage: memoryStorage(),
  providers: [{ name: 'Example', identifier: 'https://id.example.com/' }],
  session: { secret: 'x'.repeat(32) },
};

describe('root resource', () => {
  it('gives absolute endpoint URLs from the base URL, whatever the Host header says', async () => {
    const server = createAuthorizationServer({ ...options, baseUrl: 'https://auth.example.com/base/' });
    const app = express().use('/base', discoveryRouter(server));
    const res = await supertest(app).get('/base/').set('Host', 'evil.example');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      oauth: {
        authorization: { href: 'https://auth.example.com/base/oauth/authorize' },
        token: { href: 'https://auth.example.com/base/oauth/token' },
      },
    });
  });
});

describe('options', () => {
  it.each([
    [{ baseUrl: 'ftp://x' }, 'baseUrl: must be an absolute http(s) URL'],
    [{ baseUrl: 'https://x.example/?q=1' }, 'baseUrl: must not contain a query, fragment or userinfo'],
    [{ providers: [] }, 'providers: configure at least one OpenID provider'],
    [
      { providers: [{ name: 'A', identifier: 'nope' }] },
      'providers.0.identifier: must be an absolute http(s) URL',
    ],
    [{ session: { secret: 'short' } }, 'session.secret'],
    [{ tokens: { codeTtl: 601 } }, 'tokens.codeTtl'],
    [{ storage: {} }, 'storage: must implement the storage contract; missing: ephemeral.get'],
  ])('a wrong option fails at start-up with its path: %j', (override, message) => {
    expect(() =>
      createAuthorizationServer({ baseUrl: 'https://auth.example.com', ...options, ...override } as never),
    ).toThrow(message);
  });
});
