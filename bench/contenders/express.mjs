/**
 * The baselines: bare Express 5 for `GET /v1/realms` (the same route with no authentication at
 * all), and stubs for the OAuth endpoints, each an Express handler that parses the same request
 * as a real endpoint and answers a fixed response. Nothing is looked up, issued or stored: what
 * these rows measure is Node, HTTP and Express, the ceiling every contender is held against.
 */
import express from 'express';
import { listen, ready } from '../lib/contender.mjs';
import { REALMS, REDIRECT_URI, STATE } from '../lib/fixtures.mjs';

const TOKEN_RESPONSE = {
  access_token: 'stub-access-token-0123456789abcdefghijklmnopqrstuvw',
  token_type: 'Bearer',
  expires_in: 3600,
  refresh_token: 'stub-refresh-token-0123456789abcdefghijklmnopqrstuv',
  scope: 'realms:read',
};

const app = express();
app.disable('x-powered-by');

app.get('/v1/realms', (_req, res) => {
  res.json(REALMS);
});

app.post('/oauth/token', express.urlencoded({ extended: false }), (req, res) => {
  // Read what a real endpoint reads first, so that the parsing is not optimized away.
  if (typeof req.body.grant_type !== 'string' || req.get('authorization') === undefined) {
    res.status(400).json({ error: 'invalid_request' });
    return;
  }
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(TOKEN_RESPONSE);
});

app.get('/oauth/authorize', (req, res) => {
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

const { server } = await listen(app);
// The stub reads a cookie like a real authorization endpoint would; any will do.
ready(server, { cookie: 'session=stub' });
