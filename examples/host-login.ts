/**
 * An app that already signs its users in itself (here with passport-openid at an OpenID 2.0
 * provider, as a Steam site does with passport-steam) and now issues tokens to third-party tools:
 * the library reuses that login (`authenticatedAccount`) and that session (`session.middleware`),
 * so a signed-in user is only asked to trust the tool, never to log in twice.
 *
 * Run it: `npx tsx examples/host-login.ts`, then open the printed URL.
 */
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { Strategy as OpenIdStrategy } from 'passport-openid';
// In your app: `from 'openid-oauth-bridge'`.
import {
  bearerOf,
  createAuthorizationServer,
  memoryStorage,
  oauthRouter,
  registerClient,
  requireBearer,
} from '../src/index.js';
import { startDevelopmentProvider } from '../src/testing/index.js';

/** The host's own user, as its passport login keeps it. */
interface HostUser {
  id: string;
  name: string;
}

export async function createHostLoginApp(publicUrl: string, providerIdentifier: string) {
  const hostSession = session({
    secret: 'the host app secret, 32 characters or more',
    resave: false,
    saveUninitialized: false,
    cookie: { httpOnly: true, sameSite: 'lax' },
  });

  // The app's own login, as it was before the library came: passport-openid, stateless.
  const auth = new passport.Passport();
  auth.use(
    new OpenIdStrategy(
      { returnURL: `${publicUrl}/login/return`, realm: `${publicUrl}/`, stateless: true },
      (identifier: string, done: (err: unknown, user?: HostUser) => void) =>
        done(null, { id: `user:${new URL(identifier).pathname.split('/').pop()}`, name: identifier }),
    ),
  );
  auth.serializeUser((user, done) => done(null, user));
  auth.deserializeUser((user: HostUser, done) => done(null, user));

  const storage = memoryStorage();
  const tool = await registerClient(storage, {
    clientId: 'stats-tool',
    applicationName: 'Stats Tool',
    redirectUri: 'https://tool.example/callback',
    scopes: ['profile'],
  });

  const server = createAuthorizationServer({
    baseUrl: publicUrl,
    storage,
    providers: [{ name: 'Community ID', identifier: providerIdentifier }],
    scopes: { profile: 'Read your profile' },
    // The library keeps its state in the app's session, under its own key.
    session: { middleware: hostSession },
    // A user the app has signed in is signed in for the library too.
    authenticatedAccount: (req) => {
      const user = req.user as HostUser | undefined;
      return user ? { accountId: user.id, displayName: user.name } : undefined;
    },
  });

  const app = express();
  app.use(hostSession, auth.initialize(), auth.session());
  app.get('/login', auth.authenticate('openid'));
  app.get('/login/return', auth.authenticate('openid', { failureRedirect: '/' }), (_req, res) => {
    res.redirect('/');
  });
  app.get('/', (req, res) => {
    const user = req.user as HostUser | undefined;
    res
      .type('text')
      .send(user ? `Signed in as ${user.name}` : 'Not signed in: GET /login?openid_identifier=…');
  });
  app.use(oauthRouter(server));
  app.get('/api/profile', requireBearer(server, { scopes: ['profile'] }), (_req, res) => {
    res.json({ account: bearerOf(res).userId });
  });
  return { app, server, tool };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const provider = await startDevelopmentProvider();
  const port = Number(process.env.PORT ?? 3000);
  const publicUrl = `http://localhost:${port}`;
  const { app, tool } = await createHostLoginApp(publicUrl, provider.identifier);
  app.listen(port, '127.0.0.1', () => {
    const login = `${publicUrl}/login?openid_identifier=${encodeURIComponent(provider.identifier)}`;
    const authorize = `${publicUrl}/oauth/authorize?response_type=code&client_id=${tool.clientId}&redirect_uri=${encodeURIComponent('https://tool.example/callback')}`;
    console.log(`Sign in to the app:   ${login}`);
    console.log(`Then authorize a tool: ${authorize}`);
  });
}
