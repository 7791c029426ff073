// The developer page, tried out on this machine (docs/developer-page.md). Saved as app.mjs:
// node app.mjs, then open http://localhost:3000/developers
/* global console, process */
import { randomBytes } from 'node:crypto';
import express from 'express';
import {
  bearerOf,
  createAuthorizationServer,
  developerRouter,
  memoryStorage,
  oauthRouter,
  requireBearer,
} from 'openid-oauth-bridge';
import { startDevelopmentProvider } from 'openid-oauth-bridge/testing';

const port = Number(process.env.PORT ?? 3000);
const baseUrl = `http://localhost:${port}`;
// An OpenID provider where any user name signs in without a password: for trying and tests only.
const provider = await startDevelopmentProvider();
const server = createAuthorizationServer({
  baseUrl,
  storage: memoryStorage(), // everything is forgotten when the app stops
  providers: [{ name: 'Development provider', identifier: provider.identifier }],
  session: { secret: randomBytes(32).toString('base64url') }, // in production: your own, kept
  scopes: { 'realms:read': 'See the list of your realms' },
});

const app = express();
app.use(oauthRouter(server)); // /oauth/authorize, /oauth/token, ...
app.use(developerRouter(server)); // /developers: members register their own applications
app.get('/v1/realms', requireBearer(server, { scopes: ['realms:read'] }), (req, res) => {
  res.json({ user: bearerOf(res).userId, realms: ['Ravenholm'] });
});
app.listen(port, () => console.log(`developer page: ${baseUrl}/developers`));
