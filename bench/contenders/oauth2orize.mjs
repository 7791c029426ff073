/**
 * Peer contender: a minimal in-memory authorization server on Express 5 + oauth2orize 1.12 +
 * passport 0.7, written the way oauth2orize's and passport's documentation (and their example
 * app) show it:
 *
 *   - `GET  /oauth/authorize`  express-session + passport session for the logged-in user,
 *                              `server.authorization(validate, immediate)` with the code grant;
 *                              `immediate` allows at once when the user already trusted the client.
 *   - `POST /oauth/token`      passport-http `BasicStrategy` authenticates the client, then the
 *                              `authorization_code` and `refresh_token` exchanges.
 *   - `GET  /v1/realms`        passport-http-bearer, then a `realms:read` scope check.
 *   - `POST /bench/login`      contender-only: logs USER in with `req.login` (the bench's stand-in
 *                              for a login form), so the runner gets a session cookie.
 *
 * Everything lives in Maps, in plaintext, nothing hashed: that is how the peers were measured.
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import session from 'express-session';
import oauth2orize from 'oauth2orize';
import passport from 'passport';
import passportHttp from 'passport-http';
import passportHttpBearer from 'passport-http-bearer';
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

const { BasicStrategy } = passportHttp;
const { Strategy: BearerStrategy } = passportHttpBearer;

const ACCESS_TOKEN_LIFETIME = 3600; // seconds
const REFRESH_TOKEN_LIFETIME = 14 * 24 * 3600;
const CODE_LIFETIME = 5 * 60;

const newToken = () => randomBytes(32).toString('base64url');
const inSeconds = (seconds) => Date.now() + seconds * 1000;

// ---- The in-memory store ------------------------------------------------------------------------

const clients = new Map([
  [CLIENT_ID, { id: CLIENT_ID, secret: CLIENT_SECRET, redirectUris: [REDIRECT_URI], scopes: [SCOPE] }],
]);
const users = new Map([[USER, { id: USER }]]);
/** `${userId} ${clientId}` → the scopes the user allowed the client (what a consent page records). */
const trusted = new Map([[`${USER} ${CLIENT_ID}`, [SCOPE]]]);
/** code → { clientId, userId, redirectUri, scope, expiresAt } */
const codes = new Map();
/** access token → { clientId, userId, scope, expiresAt } */
const accessTokens = new Map();
/** refresh token → { clientId, userId, scope, expiresAt } */
const refreshTokens = new Map();

const scope = [SCOPE];
accessTokens.set(ACCESS_TOKEN, { clientId: CLIENT_ID, userId: USER, scope, expiresAt: inSeconds(3600) });
for (let i = 0; i < tokenCount; i++) {
  accessTokens.set(fillerTokenFor(i), {
    clientId: CLIENT_ID,
    userId: USER,
    scope,
    expiresAt: inSeconds(3600),
  });
}
refreshTokens.set(REFRESH_TOKEN, {
  clientId: CLIENT_ID,
  userId: USER,
  scope,
  expiresAt: inSeconds(REFRESH_TOKEN_LIFETIME),
});
// Seeded codes get an hour, not CODE_LIFETIME, so that a long run never meets an expired one.
for (let i = 0; i < codeCount; i++) {
  codes.set(codeFor(i), {
    clientId: CLIENT_ID,
    userId: USER,
    redirectUri: REDIRECT_URI,
    scope,
    expiresAt: inSeconds(3600),
  });
}

/** Issues an access token (and a refresh token when asked) and stores it. */
function issueTokens(clientId, userId, tokenScope, withRefresh) {
  const accessToken = newToken();
  accessTokens.set(accessToken, {
    clientId,
    userId,
    scope: tokenScope,
    expiresAt: inSeconds(ACCESS_TOKEN_LIFETIME),
  });
  let refreshToken;
  if (withRefresh) {
    refreshToken = newToken();
    refreshTokens.set(refreshToken, {
      clientId,
      userId,
      scope: tokenScope,
      expiresAt: inSeconds(REFRESH_TOKEN_LIFETIME),
    });
  }
  return { accessToken, refreshToken };
}

// ---- passport ----------------------------------------------------------------------------------

// Client authentication at the token endpoint (plaintext secret, as the peers were measured).
passport.use(
  new BasicStrategy((clientId, secret, done) => {
    const client = clients.get(clientId);
    if (!client || client.secret !== secret) return done(null, false);
    return done(null, client);
  }),
);

// The API's bearer tokens: unknown or expired → 401.
passport.use(
  new BearerStrategy((token, done) => {
    const entry = accessTokens.get(token);
    if (!entry || entry.expiresAt <= Date.now()) return done(null, false);
    const user = users.get(entry.userId);
    if (!user) return done(null, false);
    return done(null, user, { clientId: entry.clientId, scope: entry.scope });
  }),
);

// The logged-in user is kept in the session by id.
passport.serializeUser((user, done) => done(null, user.id));
passport.deserializeUser((id, done) => done(null, users.get(id) ?? false));

// ---- oauth2orize -------------------------------------------------------------------------------

const server = oauth2orize.createServer();

// Only needed when a consent dialog stores a transaction in the session (not on this path).
server.serializeClient((client, done) => done(null, client.id));
server.deserializeClient((id, done) => done(null, clients.get(id) ?? false));

// response_type=code: issue and store a single-use code bound to client, user, redirect_uri, scope.
server.grant(
  oauth2orize.grant.code((client, redirectUri, user, ares, areq, done) => {
    const code = newToken();
    codes.set(code, {
      clientId: client.id,
      userId: user.id,
      redirectUri,
      scope: areq.scope ?? client.scopes,
      expiresAt: inSeconds(CODE_LIFETIME),
    });
    done(null, code);
  }),
);

// grant_type=authorization_code: the code must exist, belong to this client, carry the same
// redirect_uri and not be expired; it is deleted on first use.
server.exchange(
  oauth2orize.exchange.code((client, code, redirectUri, done) => {
    const entry = codes.get(code);
    if (!entry) return done(null, false);
    codes.delete(code);
    if (entry.clientId !== client.id) return done(null, false);
    if (entry.redirectUri && entry.redirectUri !== redirectUri) return done(null, false);
    if (entry.expiresAt <= Date.now()) return done(null, false);
    const { accessToken, refreshToken } = issueTokens(client.id, entry.userId, entry.scope, true);
    done(null, accessToken, refreshToken, {
      expires_in: ACCESS_TOKEN_LIFETIME,
      scope: entry.scope.join(' '),
    });
  }),
);

// grant_type=refresh_token: the token must exist, belong to this client and not be expired; a
// narrower scope may be asked. No rotation: the same refresh token stays valid.
server.exchange(
  oauth2orize.exchange.refreshToken((client, refreshToken, requested, done) => {
    const entry = refreshTokens.get(refreshToken);
    if (!entry || entry.clientId !== client.id || entry.expiresAt <= Date.now()) return done(null, false);
    if (requested && !requested.every((s) => entry.scope.includes(s))) {
      return done(new oauth2orize.TokenError('Invalid scope', 'invalid_scope'));
    }
    const { accessToken } = issueTokens(client.id, entry.userId, requested ?? entry.scope, false);
    done(null, accessToken, {
      expires_in: ACCESS_TOKEN_LIFETIME,
      scope: (requested ?? entry.scope).join(' '),
    });
  }),
);

/** The authorization request: a known client, one of its redirect URIs, scopes it may ask for. */
function validate(clientId, redirectUri, requested, done) {
  const client = clients.get(clientId);
  if (!client) return done(null, false);
  if (redirectUri && !client.redirectUris.includes(redirectUri)) return done(null, false);
  const uri = redirectUri ?? client.redirectUris[0];
  if (requested && !requested.every((s) => client.scopes.includes(s))) {
    return done(new oauth2orize.AuthorizationError('Invalid scope', 'invalid_scope'), client, uri);
  }
  return done(null, client, uri);
}

/** Skips the consent dialog when the user already allowed the client every scope it asks for. */
function immediate(client, user, requested, done) {
  const allowed = trusted.get(`${user.id} ${client.id}`);
  const wanted = requested ?? client.scopes;
  done(null, Boolean(allowed && wanted.every((s) => allowed.includes(s))));
}

// ---- Express -----------------------------------------------------------------------------------

const app = express();
app.use(passport.initialize());

// Sessions only on the browser-facing routes: the token endpoint and the API do not use them,
// so the peer is not charged a session lookup it would not need there.
const browserSession = [
  session({
    secret: 'bench-session-secret',
    resave: false,
    saveUninitialized: false,
    cookie: { httpOnly: true, sameSite: 'lax' },
  }),
  passport.session(),
];

/** Would redirect to a login page; the bench always sends a logged-in session. */
const ensureLoggedIn = (req, res, next) => (req.user ? next() : res.redirect('/login'));

app.get(
  '/oauth/authorize',
  ...browserSession,
  ensureLoggedIn,
  server.authorization(validate, immediate),
  // Not immediate: a real app renders the consent dialog here (never reached by the bench).
  (req, res) => res.status(200).send(`consent needed; transaction ${req.oauth2.transactionID}`),
  server.authorizationErrorHandler(),
);

app.post(
  '/oauth/token',
  express.urlencoded({ extended: false }),
  passport.authenticate('basic', { session: false }),
  server.token(),
  server.errorHandler(),
);

app.get(
  '/v1/realms',
  passport.authenticate('bearer', { session: false }),
  (req, res, next) =>
    req.authInfo.scope.includes('realms:read')
      ? next()
      : res.status(403).set('WWW-Authenticate', 'Bearer error="insufficient_scope"').end(),
  (req, res) => res.json(REALMS),
);

// Contender-only: what a login form's handler does once the password is checked.
app.post('/bench/login', ...browserSession, (req, res, next) => {
  req.login(users.get(USER), (err) => (err ? next(err) : res.sendStatus(204)));
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
