// An existing Express app becomes an OAuth 2.0 authorization server (CommonJS). Saved as app.cjs:
// SESSION_SECRET=$(openssl rand -base64 32) OPENID_PROVIDER=https://steamcommunity.com/openid node app.cjs
/* global console, process, require */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS app, as its users write it */
const express = require('express');
const {
  ClientIdTakenError,
  bearerOf,
  connectStorage,
  createAuthorizationServer,
  oauthRouter,
  registerClient,
  requireBearer,
} = require('openid-oauth-bridge');

async function main() {
  const port = Number(process.env.PORT ?? 3000);
  const baseUrl = `http://localhost:${port}`; // in production: your public https URL
  // sqlite:… needs `npm install better-sqlite3`; postgres://… needs `npm install pg`.
  const storage = await connectStorage(process.env.DATABASE_URL ?? 'sqlite:./.data/quick-start.db', {
    migrate: true,
  });
  const server = createAuthorizationServer({
    baseUrl,
    storage,
    providers: [{ name: 'Example ID', identifier: process.env.OPENID_PROVIDER ?? 'https://id.example.com/' }],
    session: { secret: process.env.SESSION_SECRET }, // at least 32 random characters
    scopes: { 'realms:read': 'See the list of your realms' },
  });

  try {
    // Registered on the first start only: the next start finds it and keeps it.
    const { clientSecret } = await registerClient(server, {
      clientId: 'photo-printer',
      applicationName: 'Photo printer',
      redirectUri: 'https://printer.example/callback',
      scopes: ['realms:read'],
    });
    console.log(`client photo-printer registered, secret (shown once): ${clientSecret}`);
  } catch (err) {
    if (!(err instanceof ClientIdTakenError)) throw err;
  }

  const app = express();
  app.use(oauthRouter(server)); // /oauth/authorize, /oauth/token, /oauth/revoke, ...
  app.get('/v1/realms', requireBearer(server, { scopes: ['realms:read'] }), (req, res) => {
    res.json({ user: bearerOf(res).userId, realms: ['Ravenholm'] });
  });
  app.listen(port, () => console.log(`listening on ${baseUrl}`));
}
main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
