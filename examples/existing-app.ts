/**
 * The "existing app": an Express API with routes of its own (here `GET /v1/realms`) that becomes
 * an OAuth 2.0 authorization server by mounting the library's routers. This is the file to copy
 * from when adding openid-oauth-bridge to your own app.
 */
import express, { type RequestHandler } from 'express';
// In your app: `from 'openid-oauth-bridge'`. The demo imports the source so that it runs without
// a build step.
import {
  bearerOf,
  createAuthorizationServer,
  developerRouter,
  metadataRouter,
  oauthRouter,
  requireBearer,
  type AuthorizationServer,
  type AuthorizationServerOptions,
  type ProviderOptions,
  type Storage,
} from '../src/index.js';
import { MCP_PATH, realmsMcpRouter } from './realms-mcp.js';
import { REALMS_SCOPE, REALMS_WRITE_SCOPE, memoryRealms } from './realms.js';

export { REALMS_SCOPE, REALMS_WRITE_SCOPE };

export interface ExistingAppOptions {
  /** Where browsers and clients reach this app, e.g. `http://localhost:3000`. */
  publicUrl: string;
  storage: Storage;
  providers: ProviderOptions[];
  sessionSecret: string;
  /** Seals the OpenID Connect signing keys kept in the storage (OpenID Connect is on with it). */
  oidcKeySecret?: string;
  /** The one browser origin allowed to call the API from a script (the implicit-flow page). */
  browserClientOrigin: string;
  /**
   * For local testing only: https origins on this machine (`https://localhost:8443`) whose client
   * metadata documents are fetched although they are on a loopback address. Default `[]`.
   */
  clientMetadataAllowOrigins?: string[];
  /**
   * The server's rules: `'oauth2.1'` drops the implicit grant and requires PKCE and exact
   * redirect URIs (docs/oauth-2.1.md). Default: the library's, `'oauth2'`.
   */
  profile?: AuthorizationServerOptions['profile'];
  /**
   * What the access tokens of both resources are: `'jwt'` for JWT access tokens (RFC 9068) that a
   * resource server elsewhere verifies with the JWKS alone, living 15 minutes, since one revoked
   * here works there until it expires (docs/jwt-access-tokens.md); needs `oidcKeySecret`.
   * Default: opaque, one hour.
   */
  accessTokenFormat?: 'opaque' | 'jwt';
}

/** How long the demo's JWT access tokens live: short, since a remote resource server cannot see a revocation. */
export const JWT_ACCESS_TOKEN_TTL = 900;

export function createExistingApp(options: ExistingAppOptions): {
  app: express.Express;
  server: AuthorizationServer;
} {
  const mcpUrl = mcpUrlOf(options.publicUrl);
  // Built once: the options are validated here, and a wrong one throws a TypeError naming it.
  const server = createAuthorizationServer({
    baseUrl: options.publicUrl,
    storage: options.storage,
    providers: options.providers,
    session: { secret: options.sessionSecret },
    scopes: {
      [REALMS_SCOPE]: 'See the list of your realms',
      [REALMS_WRITE_SCOPE]: 'Add realms to your list',
    },
    // What the tokens are for (RFC 8707): the API, the default for a client that names none, and
    // the MCP server. A token issued for one is refused by the other.
    // ACCESS_TOKEN_FORMAT=jwt: both issue JWT access tokens (RFC 9068), short-lived.
    resources: [
      { resource: options.publicUrl, name: 'Realms API', scopes: [REALMS_SCOPE], default: true },
      { resource: mcpUrl, name: 'Realms MCP server', scopes: [REALMS_SCOPE, REALMS_WRITE_SCOPE] },
    ].map((declared) =>
      options.accessTokenFormat === undefined
        ? declared
        : {
            ...declared,
            accessTokenFormat: options.accessTokenFormat,
            ...(options.accessTokenFormat === 'jwt' ? { accessTokenTtl: JWT_ACCESS_TOKEN_TTL } : {}),
          },
    ),
    ...(options.oidcKeySecret === undefined ? {} : { oidc: { keySecret: options.oidcKeySecret } }),
    // MCP clients that register themselves (docs/mcp.md). A client_id that is an https URL names
    // a client described by the document there (VS Code's, Claude Code's), fetched from public
    // addresses only, except the local origins listed; its CA comes from NODE_EXTRA_CA_CERTS.
    clientMetadataDocuments: { allowLoopbackOrigins: options.clientMetadataAllowOrigins ?? [] },
    // Others register at POST /oauth/register (RFC 7591), as public clients. Every connection of
    // some clients registers anew: unused registrations are pruned after a day (storage.prune).
    // The burst limit is per address, and many users may share one (a company's egress).
    dynamicRegistration: { rateLimit: { maxPerMinute: 29 } },
    ...(options.profile === undefined ? {} : { profile: options.profile }),
  });

  const app = express();
  app.disable('x-powered-by');
  if (options.publicUrl.startsWith('https:')) {
    // An https PUBLIC_URL means a TLS-terminating proxy in front of this plain-http server. The
    // library marks its session cookie Secure then, and express-session only sends such a cookie
    // when Express trusts the proxy's X-Forwarded-Proto: which proxy to trust is the host's call.
    app.set('trust proxy', 'loopback');
  }

  const api = express.Router();
  // Every endpoint of the authorization server, in one router in front of the app's own routes:
  // - GET /: the root resource, where clients discover the two endpoint URLs;
  // - GET /oauth/authorize and the login, consent and callback pages around it;
  // - POST /oauth/token;
  // - GET /oauth/applications: the user's authorized applications, each with a revoke button;
  // - POST /oauth/revoke (RFC 7009): a client signing a user out ends its grant;
  // - POST /oauth/introspect (RFC 7662): here only for a client's own tokens; list the client ids
  //   of separate resource servers in `resourceServers` to let them check every token.
  api.use(oauthRouter(server));
  // The developer page (docs/developer-page.md): members sign in at a provider, as they do to
  // authorize, and register their own applications at GET /developers, each with a secret shown
  // once. Its limits are the server's `developerApps` option (here the defaults: 10 applications
  // a member, at most 100 members for an application the operator has not verified).
  api.use(developerRouter(server));

  // The app's own API, the default resource (requireBearer without `resource` protects it).
  const realms = memoryRealms();
  api.use('/v1/realms', allowBrowserOrigin(options.browserClientOrigin));
  api.get('/v1/realms', requireBearer(server, { scopes: [REALMS_SCOPE] }), async (_req, res) => {
    const { userId, clientId } = bearerOf(res);
    res.set('Cache-Control', 'no-store');
    // A client acting as itself (the client credentials grant: a bot, a job) has no member, so no
    // realms of its own; a route that acts for a member would refuse it here instead.
    if (userId === null) {
      res.json({ owner: null, client: clientId, realms: [] });
      return;
    }
    const user = await server.storage.users.find?.(userId);
    res.json({ owner: user?.identifier ?? null, realms: realms.list(userId) });
  });
  // The MCP server (./realms-mcp.ts): the same realms as tools for AI assistants.
  api.use(realmsMcpRouter(server, { resource: mcpUrl, realms }));

  // An audit trail: what happened, to whom, from where. Payloads never carry tokens or secrets.
  server.events.on('*', (event) => {
    const { type, at, ...details } = event;
    if (type === 'server.error') return; // already logged by the library
    console.log(`[audit] ${new Date(at).toISOString()} ${type} ${JSON.stringify(details)}`);
  });

  // RFC 8414 metadata sits at the origin root, before the path of baseUrl (for
  // http://localhost:3000/auth: GET /.well-known/oauth-authorization-server/auth), and so does the
  // protected resource metadata of each resource (RFC 9728: /.well-known/oauth-protected-resource/mcp).
  app.use(metadataRouter(server));
  // The library builds every URL from baseUrl, so its routers must sit at baseUrl's path.
  app.use(new URL(options.publicUrl).pathname, api);
  return { app, server };
}

/** The MCP server's URL: `MCP_PATH` under the app's public URL (which may have a path). */
export function mcpUrlOf(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${MCP_PATH}`;
}

/**
 * CORS for one origin, so a script on the implicit-flow page may send its Authorization header
 * here. Written out instead of using the `cors` package: it allows exactly one origin, one method
 * and one header, and no credentials (the API reads bearer tokens, never cookies).
 */
function allowBrowserOrigin(origin: string): RequestHandler {
  return (req, res, next) => {
    res.vary('Origin');
    if (req.get('origin') !== origin) return next();
    res.set({ 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': 'WWW-Authenticate' });
    if (req.method !== 'OPTIONS') return next();
    res.set({
      'Access-Control-Allow-Methods': 'GET',
      'Access-Control-Allow-Headers': 'Authorization',
      'Access-Control-Max-Age': '600',
    });
    res.sendStatus(204);
  };
}
