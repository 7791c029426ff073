/**
 * The baselines' Express app: bare Express 5 for `GET /v1/realms` (the same route with no
 * authentication at all), and stubs for the OAuth endpoints, each an Express handler that parses
 * the same request as a real endpoint and answers a fixed response.
 *
 * `work`, when given, runs before each answer (sync, or resolving a promise): the `bound-*`
 * contenders put the storage probe's work for the workload there.
 */
import express from 'express';
import { REALMS, REDIRECT_URI, STATE } from './fixtures.mjs';

const TOKEN_RESPONSE = {
  access_token: 'stub-access-token-0123456789abcdefghijklmnopqrstuvw',
  token_type: 'Bearer',
  expires_in: 3600,
  refresh_token: 'stub-refresh-token-0123456789abcdefghijklmnopqrstuv',
  scope: 'realms:read',
};

export function stubApp(work) {
  const app = express();
  app.disable('x-powered-by');
  const before = work === undefined ? [] : [workStep(work)];

  app.get('/v1/realms', ...before, (_req, res) => {
    res.json(REALMS);
  });

  app.post('/oauth/token', express.urlencoded({ extended: false }), ...before, (req, res) => {
    // Read what a real endpoint reads first, so that the parsing is not optimized away.
    if (typeof req.body.grant_type !== 'string' || req.get('authorization') === undefined) {
      res.status(400).json({ error: 'invalid_request' });
      return;
    }
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(TOKEN_RESPONSE);
  });

  app.get('/oauth/authorize', ...before, (req, res) => {
    const { client_id: clientId, redirect_uri: redirectUri, state } = req.query;
    if (clientId === undefined || redirectUri === undefined || req.get('cookie') === undefined) {
      res.status(400).send('invalid_request');
      return;
    }
    res.redirect(
      302,
      `${REDIRECT_URI}?code=stub-code-0123456789abcdefghijklmnopqrstuvwxyz&state=${state ?? STATE}`,
    );
  });
  return app;
}

function workStep(work) {
  return (_req, _res, next) => {
    let done;
    try {
      done = work();
    } catch (err) {
      next(err);
      return;
    }
    if (done instanceof Promise) done.then(() => next(), next);
    else next();
  };
}
