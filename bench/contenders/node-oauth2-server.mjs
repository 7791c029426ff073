/**
 * Peer contender: a minimal in-memory authorization server on Express 5 +
 * @node-oauth/oauth2-server 5.3, written the way its documentation shows it: an `OAuth2Server`
 * with an in-memory model, each Express request wrapped in its `Request`/`Response`, and the
 * result copied back to Express as @node-oauth/express-oauth-server does.
 *
 *   - `GET  /oauth/authorize`  express-session for the logged-in user; `server.authorize` with an
 *                              `authenticateHandler` returning the session's user. The consent
 *                              step is the app's: it goes straight on when the user already
 *                              trusted the client.
 *   - `POST /oauth/token`      `server.token` (client secret by HTTP Basic; authorization_code and
 *                              refresh_token grants; refresh tokens not rotated).
 *   - `GET  /v1/realms`        `server.authenticate` with `scope: 'realms:read'`.
 *   - `POST /bench/login`      contender-only: puts USER in the session (the bench's stand-in for
 *                              a login form), so the runner gets a session cookie.
 *
 * Everything lives in Maps, in plaintext, nothing hashed: that is how the peers were measured.
 * Tokens and codes are the library's default: 32 random bytes, hex.
 */
import express from 'express';
import session from 'express-session';
import OAuth2Server from '@node-oauth/oauth2-server';
import { codeCount, listen, ready, tokenCount, workload } from '../lib/contender.mjs';
import {
  ACCESS_TOKEN,
  CLIENT_ID,
  CLIENT_SECRET,
  REALMS,
  REDIRECT_URI,
  REFRESH_TOKEN,
  SCOPE,
  USER,
  codeFor,
  fillerTokenFor,
} from '../lib/fixtures.mjs';

const { Request, Response, OAuthError, UnauthorizedRequestError } = OAuth2Server;

const inSeconds = (seconds) => new Date(Date.now() + seconds * 1000);

// ---- The in-memory store ------------------------------------------------------------------------

const client = {
  id: CLIENT_ID,
  secret: CLIENT_SECRET,
  grants: ['authorization_code', 'refresh_token'],
  redirectUris: [REDIRECT_URI],
  scopes: [SCOPE],
};
const clients = new Map([[CLIENT_ID, client]]);
const user = { id: USER };
const users = new Map([[USER, user]]);
/** `${userId} ${clientId}` → the scopes the user allowed the client (what a consent page records). */
const trusted = new Map([[`${USER} ${CLIENT_ID}`, [SCOPE]]]);
/** code → { authorizationCode, expiresAt, redirectUri, scope, client, user } */
const codes = new Map();
/** access token → { accessToken, accessTokenExpiresAt, scope, client, user } */
const accessTokens = new Map();
/** refresh token → { refreshToken, refreshTokenExpiresAt, scope, client, user } */
const refreshTokens = new Map();

const scope = [SCOPE];
accessTokens.set(ACCESS_TOKEN, {
  accessToken: ACCESS_TOKEN,
  accessTokenExpiresAt: inSeconds(3600),
  scope,
  client,
  user,
});
for (let i = 0; i < tokenCount; i++) {
  const accessToken = fillerTokenFor(i);
  accessTokens.set(accessToken, { accessToken, accessTokenExpiresAt: inSeconds(3600), scope, client, user });
}
refreshTokens.set(REFRESH_TOKEN, {
  refreshToken: REFRESH_TOKEN,
  refreshTokenExpiresAt: inSeconds(14 * 24 * 3600),
  scope,
  client,
  user,
});
// Seeded codes get an hour, not the 5-minute default, so that a long run never meets an expired one.
for (let i = 0; i < codeCount; i++) {
  const authorizationCode = codeFor(i);
  codes.set(authorizationCode, {
    authorizationCode,
    expiresAt: inSeconds(3600),
    redirectUri: REDIRECT_URI,
    scope,
    client,
    user,
  });
}

// ---- The model (the library checks expiry, client of code/refresh token, redirect_uri) ---------

const model = {
  // Called with the secret at the token endpoint, with `null` at the authorization endpoint.
  async getClient(clientId, clientSecret) {
    const found = clients.get(clientId);
    if (!found || (clientSecret !== null && found.secret !== clientSecret)) return false;
    return found;
  },

  async getAccessToken(accessToken) {
    return accessTokens.get(accessToken) ?? false;
  },

  async getRefreshToken(refreshToken) {
    return refreshTokens.get(refreshToken) ?? false;
  },

  async getAuthorizationCode(authorizationCode) {
    return codes.get(authorizationCode) ?? false;
  },

  async saveAuthorizationCode(code, codeClient, codeUser) {
    const saved = { ...code, client: codeClient, user: codeUser };
    codes.set(code.authorizationCode, saved);
    return saved;
  },

  // Single use: the library calls this before issuing tokens and fails if it returns false.
  async revokeAuthorizationCode(code) {
    return codes.delete(code.authorizationCode);
  },

  async saveToken(token, tokenClient, tokenUser) {
    const saved = { ...token, client: tokenClient, user: tokenUser };
    accessTokens.set(token.accessToken, {
      accessToken: token.accessToken,
      accessTokenExpiresAt: token.accessTokenExpiresAt,
      scope: token.scope,
      client: tokenClient,
      user: tokenUser,
    });
    if (token.refreshToken) {
      refreshTokens.set(token.refreshToken, {
        refreshToken: token.refreshToken,
        refreshTokenExpiresAt: token.refreshTokenExpiresAt,
        scope: token.scope,
        client: tokenClient,
        user: tokenUser,
      });
    }
    return saved;
  },

  // Only reached with alwaysIssueNewRefreshToken (rotation), which this server turns off.
  async revokeToken(token) {
    return refreshTokens.delete(token.refreshToken);
  },

  // Requested scopes must be among the client's; none requested → all of them.
  async validateScope(scopeUser, scopeClient, requested) {
    if (!requested) return scopeClient.scopes;
    return requested.every((s) => scopeClient.scopes.includes(s)) ? requested : false;
  },

  // `authenticate({ scope })`: every required scope must have been granted.
  async verifyScope(token, required) {
    return required.every((s) => token.scope?.includes(s));
  },
};

const oauth = new OAuth2Server({
  model,
  accessTokenLifetime: 3600,
  // The runner sends the same refresh token every time: no rotation.
  alwaysIssueNewRefreshToken: false,
});

// ---- Express glue, as @node-oauth/express-oauth-server writes it ------------------------------

function sendResponse(res, response) {
  if (response.status === 302) {
    const { location, ...headers } = response.headers;
    res.set(headers);
    return res.redirect(location);
  }
  res.set(response.headers);
  return res.status(response.status).send(response.body);
}

function sendError(res, response, error, next) {
  if (!(error instanceof OAuthError)) return next(error);
  // The authorization endpoint reports its errors to the client by redirect.
  if (response.status === 302) return sendResponse(res, response);
  res.set(response.headers);
  res.status(error.code);
  if (error instanceof UnauthorizedRequestError) return res.send();
  return res.send({ error: error.name, error_description: error.message });
}

const app = express();

// Sessions only on the browser-facing routes: the token endpoint and the API do not use them,
// so the peer is not charged a session lookup it would not need there.
const browserSession = session({
  secret: 'bench-session-secret',
  resave: false,
  saveUninitialized: false,
  cookie: { httpOnly: true, sameSite: 'lax' },
});

app.get('/oauth/authorize', browserSession, async (req, res, next) => {
  const current = users.get(req.session.userId);
  // Would redirect to a login page; the bench always sends a logged-in session.
  if (!current) return res.redirect('/login');
  // The library has no consent step: the app skips it when the user already trusted the client
  // with every scope asked for, else renders it (never reached by the bench).
  const allowed = trusted.get(`${current.id} ${req.query.client_id}`);
  const wanted = typeof req.query.scope === 'string' ? req.query.scope.split(' ') : [];
  if (!allowed || !wanted.every((s) => allowed.includes(s))) {
    return res.status(200).send('consent needed');
  }
  const request = new Request(req);
  const response = new Response(res);
  try {
    await oauth.authorize(request, response, { authenticateHandler: { handle: () => current } });
  } catch (error) {
    return sendError(res, response, error, next);
  }
  return sendResponse(res, response);
});

app.post('/oauth/token', express.urlencoded({ extended: false }), async (req, res, next) => {
  const request = new Request(req);
  const response = new Response(res);
  try {
    await oauth.token(request, response);
  } catch (error) {
    return sendError(res, response, error, next);
  }
  return sendResponse(res, response);
});

const requireRealmsRead = async (req, res, next) => {
  const request = new Request(req);
  const response = new Response(res);
  try {
    res.locals.oauth = { token: await oauth.authenticate(request, response, { scope: 'realms:read' }) };
  } catch (error) {
    return sendError(res, response, error, next);
  }
  return next();
};

app.get('/v1/realms', requireRealmsRead, (req, res) => res.json(REALMS));

// Contender-only: what a login form's handler does once the password is checked.
app.post('/bench/login', browserSession, (req, res, next) => {
  req.session.regenerate((err) => {
    if (err) return next(err);
    req.session.userId = USER;
    return res.sendStatus(204);
  });
});

const { server: httpServer, url } = await listen(app);

let headers = {};
if (workload === 'authorize') {
  const response = await fetch(`${url}/bench/login`, { method: 'POST' });
  const setCookie = response.headers.get('set-cookie');
  if (response.status !== 204 || !setCookie) throw new Error(`login failed: ${response.status}`);
  headers = { cookie: setCookie.split(';')[0] };
}
ready(httpServer, headers);
