import supertest from 'supertest';
import { afterAll, describe, expect } from 'vitest';
import { CODE_REDIRECT, expectOAuthError, type TestApp } from '../support/app.js';
import { appOnFreshDatabase, itOn, sqlEngines } from '../support/databases.js';
import { basicAuth } from '../support/flow.js';

/**
 * A NUL character in a parameter or in HTTP Basic credentials is refused as malformed before any
 * storage sees it: PostgreSQL refuses NUL in text, which answered 500 (issue 18's standard: bad
 * input gets the RFC's error, never a 500).
 */
const { engines, cleanup } = await sqlEngines('nul');
afterAll(cleanup);

describe.each(engines)('NUL in parameters, $name', (engine) => {
  const test = itOn(engine);
  const { start } = appOnFreshDatabase(engine);
  const token = (app: TestApp, body: string) =>
    supertest(app.baseUrl).post('/oauth/token').type('form').send(body);

  test('token endpoint: client_id in the body', async () => {
    const app = await start();
    const body = `grant_type=authorization_code&client_id=%00x&client_secret=s&code=abc&redirect_uri=${encodeURIComponent(CODE_REDIRECT)}`;
    expectOAuthError(await token(app, body), 'invalid_request');
  });

  test('token endpoint: HTTP Basic', async () => {
    const app = await start();
    const res = await token(app, 'grant_type=refresh_token&refresh_token=abc').set(
      'Authorization',
      basicAuth('\u0000x', 's'),
    );
    expectOAuthError(res, 'invalid_request');
  });

  test('authorization endpoint: an error page, not a redirect', async () => {
    const app = await start();
    const res = await supertest(app.baseUrl).get('/oauth/authorize?client_id=%00x&response_type=code');
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('NUL');
  });
});
