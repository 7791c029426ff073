/**
 * In-process probe, not a contender: what reading the login session costs per request, through
 * express-session (its middleware and its end of response, as the library runs it) against a bare
 * read of the same session (cookie parse, signature check, store read), over express-session's own
 * MemoryStore (the library's session store is internal; a store read costs the same on both sides).
 *
 *   node bench/probes/session.mjs
 *
 * Prints CPU microseconds per request, 2 rounds of each taken in turn.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const session = require('express-session');
const signature = require('cookie-signature');
const cookie = require('cookie');

const NAME = 'openid_oauth_bridge.sid';
const SECRET = 'a bench session secret, long enough to sign';
const store = new session.MemoryStore();
const now = Date.now();
const data = {
  cookie: { originalMaxAge: null, expires: null, httpOnly: true, path: '/', sameSite: 'lax' },
  openidOAuthBridge: {
    startedAt: now,
    lastSeenAt: now,
    user: {
      id: 'u-123456',
      identifier: 'http://127.0.0.1:4000/user/alice',
      provider: 'Development provider',
    },
    logoutCsrf: 'abcdefghijabcdefghijabcdefghij0123456789abc',
  },
};
await new Promise((resolve) => store.set('sid-1', data, resolve));
const header = `${NAME}=${encodeURIComponent(`s:${signature.sign('sid-1', SECRET)}`)}`;

const middleware = session({
  name: NAME,
  secret: SECRET,
  store,
  resave: false,
  saveUninitialized: false,
  rolling: false,
  cookie: { httpOnly: true, sameSite: 'lax', path: '/' },
});

/** Just enough of a response for express-session: headers, writeHead and end. */
function response() {
  const headers = {};
  return {
    statusCode: 302,
    headersSent: false,
    setHeader: (name, value) => void (headers[name.toLowerCase()] = value),
    getHeader: (name) => headers[name.toLowerCase()],
    writeHead() {
      this.headersSent = true;
      this._header = true;
      return this;
    },
    _implicitHeader() {
      this.writeHead(this.statusCode);
    },
    end() {
      this.headersSent = true;
      return true;
    },
  };
}

async function throughExpressSession() {
  const req = {
    headers: { cookie: header },
    url: '/oauth/authorize',
    originalUrl: '/oauth/authorize',
    method: 'GET',
  };
  const res = response();
  await new Promise((resolve) => middleware(req, res, resolve));
  const state = req.session.openidOAuthBridge;
  res.writeHead(302);
  res.end();
  return state;
}

async function bareRead() {
  const raw = cookie.parse(header)[NAME];
  const sid = signature.unsign(raw.slice(2), SECRET);
  const stored = await new Promise((resolve, reject) =>
    store.get(sid, (err, value) => (err ? reject(err) : resolve(value))),
  );
  return stored.openidOAuthBridge;
}

const N = 20_000;
for (const [name, read] of [
  ['express-session', throughExpressSession],
  ['bare read', bareRead],
  ['express-session', throughExpressSession],
  ['bare read', bareRead],
]) {
  for (let i = 0; i < 2_000; i++) await read();
  const before = process.cpuUsage();
  for (let i = 0; i < N; i++) await read();
  const used = process.cpuUsage(before);
  console.log(`${name.padEnd(16)} ${((used.user + used.system) / N).toFixed(1)} µs CPU per request`);
}
