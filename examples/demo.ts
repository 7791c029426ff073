/**
 * `npm run demo`: the whole flow on this machine, as three servers bound to 127.0.0.1.
 *
 * - PORT (default 3000): the "existing app" with openid-oauth-bridge mounted (./existing-app.ts),
 *   with its API at /v1/realms and an MCP server at /mcp (./realms-mcp.ts), two resources, and
 *   the developer page at /developers, where members register their own applications;
 * - PORT+1: a client application that uses both grants (./client-app.ts);
 * - PORT+2: the development OpenID 2.0 provider, where any user name logs in without a password.
 *
 * Environment: PORT, PUBLIC_URL (default http://localhost:PORT), DATABASE_URL (default
 * sqlite:./.data/demo.db; postgres://… for PostgreSQL), SESSION_SECRET (default: random per run),
 * OIDC_KEY_SECRET (seals the OpenID Connect signing keys; default: one kept in ./.data, so the
 * keys in the database open again after a restart; the CLI's `keys rotate` reads the same variable),
 * OAUTH_PROFILE (`oauth2.1`: no implicit grant, PKCE for every code flow, exact redirect URIs, no
 * access token in a URL; default: the service specification's OAuth 2.0, docs/oauth-2.1.md),
 * ACCESS_TOKEN_FORMAT (`jwt`: JWT access tokens, RFC 9068, for both resources, living 15 minutes;
 * default: opaque, docs/jwt-access-tokens.md),
 * OPENID_PROVIDERS (JSON list of {"name","identifier"}; default: the development provider, which
 * is then not started), CLIENT_METADATA_ALLOW_ORIGINS (for local testing: comma-separated https
 * origins on this machine whose client metadata documents are fetched; trust their CA with Node's
 * NODE_EXTRA_CA_CERTS).
 *
 * MCP clients may also register themselves: through a client metadata document (a client_id that
 * is an https URL) or dynamic registration (POST /oauth/register, at most 29 a minute from one
 * address).
 *
 * The database keeps clients, users, grants (the users' consents) and tokens across restarts. The
 * demo client keeps its credentials next to it (./.data/demo-clients.json), as a real client keeps
 * its secret. The audit trail, a JSON line per security-relevant event, goes to ./.data/audit.jsonl.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import { dirname } from 'node:path';
import {
  closeGracefully,
  connectStorage,
  registerClient,
  updateClient,
  type ClientRegistration,
  type IssuedClient,
  launchpad,
  steam,
  ubuntuOne,
  type AuthorizationServer,
  type ProviderOptions,
  type Storage,
} from '../src/index.js';
import { auditTrail, metricsRouter } from '../src/observability/index.js';
import { startDevelopmentProvider } from '../src/testing/index.js';
import { createClientApp } from './client-app.js';
import {
  createExistingApp,
  JWT_ACCESS_TOKEN_TTL,
  mcpUrlOf,
  REALMS_SCOPE,
  REALMS_WRITE_SCOPE,
  type ExistingAppOptions,
} from './existing-app.js';

/** Everything started so far, stopped in reverse order on exit. */
const running: { name: string; close: () => Promise<void> }[] = [];

async function main(): Promise<void> {
  const port = parsePort(process.env.PORT ?? '3000');
  const publicUrl = process.env.PUBLIC_URL ?? `http://localhost:${port}`;
  // 127.0.0.1, not localhost: cookies ignore ports, so a different host name keeps the client's
  // cookie and the authorization server's apart, as they would be on two real sites.
  const clientUrl = `http://127.0.0.1:${port + 1}`;

  let sessionSecret = process.env.SESSION_SECRET;
  if (sessionSecret === undefined) {
    sessionSecret = randomBytes(32).toString('base64url');
    console.log('SESSION_SECRET is not set: using a random one, so login sessions end when the demo stops.');
  }

  let providers: ProviderOptions[];
  let providerNote: string;
  if (process.env.OPENID_PROVIDERS === undefined) {
    const op = await startDevelopmentProvider({ port: port + 2, users: ['alice', 'bob'] });
    running.push({ name: 'OpenID provider', close: op.close });
    // The development provider, and the real providers' presets beside it (they need the network).
    providers = [
      { name: 'Development provider', identifier: op.identifier },
      // With STEAM_API_KEY set, Steam sign-ins show the persona name and avatar (the Steam Web API).
      steam(process.env.STEAM_API_KEY ? { webApi: { key: process.env.STEAM_API_KEY } } : {}),
      launchpad(),
      ubuntuOne(),
    ];
    providerNote = `${op.url}/  (development only: any user name, no password); Steam, Launchpad and Ubuntu One need the network`;
  } else {
    // Validated by createAuthorizationServer, which names the offending entry.
    providers = parseJson('OPENID_PROVIDERS', process.env.OPENID_PROVIDERS) as ProviderOptions[];
    providerNote = 'from OPENID_PROVIDERS (the development provider is not started)';
  }

  const databaseUrl = process.env.DATABASE_URL ?? 'sqlite:./.data/demo.db';
  const storage = await connectStorage(databaseUrl, { migrate: true });
  running.push({ name: 'Database', close: () => storage.close() });
  // What can no longer work goes: expired tokens, and the registrations of MCP clients that
  // register at every connection and never came back for a token (docs/operating.md).
  const pruning = setInterval(() => {
    storage.prune(Date.now()).catch((err: unknown) => console.error('prune:', err));
  }, PRUNE_INTERVAL_MS);
  running.push({ name: 'Pruning', close: async () => clearInterval(pruning) });
  const oidcKeySecret = process.env.OIDC_KEY_SECRET ?? demoKeySecret(databaseUrl);
  const clientMetadataAllowOrigins = parseOrigins(process.env.CLIENT_METADATA_ALLOW_ORIGINS);
  const profile = parseProfile(process.env.OAUTH_PROFILE);
  const accessTokenFormat = parseAccessTokenFormat(process.env.ACCESS_TOKEN_FORMAT);
  const { app, server } = createExistingApp({
    publicUrl,
    storage,
    providers,
    sessionSecret,
    oidcKeySecret,
    browserClientOrigin: clientUrl,
    clientMetadataAllowOrigins,
    ...(profile === undefined ? {} : { profile }),
    ...(accessTokenFormat === undefined ? {} : { accessTokenFormat }),
  });
  startAuditTrail(server);
  // Closed after the HTTP servers (pushed later) and before the database: the per-app usage
  // counts still held in memory are written once the last request has finished.
  running.push({ name: 'Usage counts', close: async () => server.usage?.close() });
  // The figures for Prometheus (docs/operating.md), at /metrics, answered to this machine only.
  const metrics = metricsRouter(server);
  app.use(metrics);
  running.push({ name: 'Metrics', close: async () => metrics.stop() });

  // The operator's out-of-band registration (the spec's rule 1). Fixed ids keep the demo's URLs
  // readable; the secret is random, shown here once and stored only as a hash.
  const codeClient = {
    applicationName: 'Demo realm viewer',
    redirectUri: `${clientUrl}/callback`,
    clientId: 'demo-code-client',
    scopes: [REALMS_SCOPE],
  };
  const implicitClient = {
    applicationName: 'Demo realm viewer (browser)',
    redirectUri: `${clientUrl}/implicit`,
    clientId: 'demo-implicit-client',
    grantType: 'implicit' as const,
    scopes: [REALMS_SCOPE],
  };
  // An OpenID Connect relying party (openid-client, Keycloak, Auth.js...) signs users in with it.
  const oidcClient = {
    applicationName: 'Demo OpenID Connect app',
    redirectUri: 'http://127.0.0.1:8080/callback',
    clientId: 'demo-oidc-client',
    scopes: ['openid', 'profile', REALMS_SCOPE],
  };
  // Native apps (docs/native-apps.md): public clients, without a secret. A command-line tool signs
  // in with the device flow (examples/device-cli.ts), a desktop app through a loopback redirect on
  // any port (examples/native-app.ts).
  const deviceClient = {
    applicationName: 'Demo realm CLI',
    clientId: 'demo-device-client',
    grantType: 'device_code' as const,
    public: true,
    scopes: [REALMS_SCOPE],
  };
  const nativeClient = {
    applicationName: 'Demo desktop app',
    redirectUri: 'http://127.0.0.1/callback',
    clientId: 'demo-native-client',
    public: true,
    scopes: [REALMS_SCOPE],
  };
  // An MCP client (an AI assistant) given this client id, as Claude Code is with --client-id and
  // --callback-port (its redirect is http://localhost:PORT/callback). It may add realms when the
  // user agrees; a request that names no scope gets only realms:read.
  const mcpClient = {
    applicationName: 'Demo MCP client',
    redirectUri: `http://localhost:${MCP_CALLBACK_PORT}/callback`,
    clientId: 'demo-mcp-client',
    public: true,
    scopes: [REALMS_SCOPE, REALMS_WRITE_SCOPE],
    defaultScopes: [REALMS_SCOPE],
  };
  // A bot or a job that calls the API as itself, for no member (the client credentials grant):
  // confidential, no redirect URI, no refresh token; its tokens have no member behind them.
  const botClient = {
    applicationName: 'Demo realm bot',
    clientId: 'demo-bot-client',
    grantType: 'client_credentials' as const,
    scopes: [REALMS_SCOPE],
  };
  const {
    code: issuedCode,
    implicit: issuedImplicit,
    oidc: issuedOidc,
    device: issuedDevice,
    native: issuedNative,
    mcp: issuedMcp,
    bot: issuedBot,
  } = await demoClients(storage, databaseUrl, {
    code: codeClient,
    implicit: implicitClient,
    oidc: oidcClient,
    device: deviceClient,
    native: nativeClient,
    mcp: mcpClient,
    bot: botClient,
  });
  const mcpUrl = mcpUrlOf(publicUrl);

  await listen('Authorization server', app, port);
  const client = createClientApp({
    url: clientUrl,
    serverUrl: publicUrl,
    codeClient: { clientId: issuedCode.clientId, clientSecret: issuedCode.clientSecret! },
    implicitClient: { clientId: issuedImplicit.clientId },
    providers,
  });
  await listen('Client application', client, port + 1);

  console.log(`
openid-oauth-bridge demo

  Authorization server  ${publicUrl}  (GET / is the root resource; the API is GET /v1/realms)
  Developer page        ${publicUrl}/developers  (members sign in and register their own applications)
  Metrics               http://127.0.0.1:${port}/metrics  (Prometheus text format, answered to this machine only)
  Client application    ${clientUrl}/
  OpenID provider       ${providerNote}
  Audit trail           ${AUDIT_FILE}  (a JSON line per login, consent, grant and revocation; no secret)
  Database              ${databaseUrl.startsWith('sqlite:') ? databaseUrl : `${storage.dialect}, from DATABASE_URL (not shown: it may hold a password)`}

Registered clients (client secrets are stored as hashes; the demo client keeps its own copy):
  ${codeClient.applicationName}, authorization code grant
    client_id      ${issuedCode.clientId}
    client_secret  ${issuedCode.clientSecret}
    redirect_uri   ${codeClient.redirectUri}
  ${implicitClient.applicationName}, implicit grant${profile === 'oauth2.1' ? ' (refused: OAUTH_PROFILE=oauth2.1 has no implicit grant)' : ''}
    client_id      ${issuedImplicit.clientId}
    redirect_uri   ${implicitClient.redirectUri}
  ${oidcClient.applicationName}, OpenID Connect (authorization code grant, scopes ${oidcClient.scopes.join(' ')})
    client_id      ${issuedOidc.clientId}
    client_secret  ${issuedOidc.clientSecret}
    redirect_uri   ${oidcClient.redirectUri}
  ${deviceClient.applicationName}, device flow, public (try: ISSUER=${publicUrl} CLIENT_ID=${issuedDevice.clientId} npx tsx examples/device-cli.ts)
    client_id      ${issuedDevice.clientId}
  ${nativeClient.applicationName}, authorization code grant with PKCE, public (try: ISSUER=${publicUrl} CLIENT_ID=${issuedNative.clientId} npx tsx examples/native-app.ts)
    client_id      ${issuedNative.clientId}
    redirect_uri   ${nativeClient.redirectUri} (any port)
  ${mcpClient.applicationName}, authorization code grant with PKCE, public, for MCP clients (scopes ${mcpClient.scopes.join(' ')}; by default ${mcpClient.defaultScopes.join(' ')})
    client_id      ${issuedMcp.clientId}
    redirect_uri   ${mcpClient.redirectUri}
  ${botClient.applicationName}, client credentials: acts as itself, for no member (try: curl -u ${issuedBot.clientId}:SECRET -d grant_type=client_credentials ${publicUrl}/oauth/token)
    client_id      ${issuedBot.clientId}
    client_secret  ${issuedBot.clientSecret}

MCP server (tools whoami, list_realms, write_realm): ${mcpUrl}
  Claude Code:  claude mcp add --transport http --client-id ${issuedMcp.clientId} --callback-port ${MCP_CALLBACK_PORT} demo-realms ${mcpUrl}
                then /mcp in Claude Code: pick demo-realms, Authenticate
  Any MCP client given a client id: ${issuedMcp.clientId}, redirect ${mcpClient.redirectUri}
  ${selfRegisteringMcpClients(mcpUrl, clientMetadataAllowOrigins)}

OpenID Connect discovery: ${publicUrl}/.well-known/openid-configuration (keys: ${publicUrl}/oauth/jwks)
${rotateKeysHelp(databaseUrl)}

Access tokens: ${accessTokenFormat === 'jwt' ? `JWT (ACCESS_TOKEN_FORMAT, RFC 9068), living ${JWT_ACCESS_TOKEN_TTL / 60} minutes: verify them with the keys at ${publicUrl}/oauth/jwks` : 'opaque, the default (ACCESS_TOKEN_FORMAT=jwt for JWT access tokens, RFC 9068)'}
Profile: ${profile === 'oauth2.1' ? 'oauth2.1 (OAUTH_PROFILE): no implicit grant, PKCE for every code flow, exact redirect URIs' : 'oauth2, the default (OAUTH_PROFILE=oauth2.1 for OAuth 2.1)'}

Open ${clientUrl}/ in your browser. Ctrl-C stops the demo.
`);
}

/**
 * The server's profile from OAUTH_PROFILE: `oauth2.1`, `oauth2`, or unset for the default. Another
 * value is passed on, for createAuthorizationServer to refuse by name.
 */
function parseProfile(value: string | undefined): ExistingAppOptions['profile'] {
  return value === undefined || value === '' ? undefined : (value as ExistingAppOptions['profile']);
}

/**
 * The access token format from ACCESS_TOKEN_FORMAT: `jwt`, `opaque`, or unset for the default.
 * Another value is passed on, for createAuthorizationServer to refuse by name.
 */
function parseAccessTokenFormat(value: string | undefined): ExistingAppOptions['accessTokenFormat'] {
  return value === undefined || value === '' ? undefined : (value as ExistingAppOptions['accessTokenFormat']);
}

/** The demo's registered clients. */
const DEMO_CLIENTS = ['code', 'implicit', 'oidc', 'device', 'native', 'mcp', 'bot'] as const;
type DemoClient = (typeof DEMO_CLIENTS)[number];

/** How often the demo prunes its database. */
const PRUNE_INTERVAL_MS = 10 * 60_000;

/** The port of the MCP client's redirect URI (Claude Code's --callback-port). */
const MCP_CALLBACK_PORT = 8976;

/**
 * How MCP clients without a client id connect: by a client metadata document (VS Code, Claude
 * Code) or by dynamic registration (Cursor and older clients), both on in ./existing-app.ts.
 */
function selfRegisteringMcpClients(mcpUrl: string, allowOrigins: string[]): string {
  return `VS Code (.vscode/mcp.json: {"servers":{"demo-realms":{"type":"http","url":"${mcpUrl}"}}}), Cursor, Claude Code
  without --client-id: they register themselves, by a client metadata document or dynamic registration
  (POST /oauth/register, at most 29 a minute from one address); the consent page says so.
  Documents on this machine (CLIENT_METADATA_ALLOW_ORIGINS; their CA from NODE_EXTRA_CA_CERTS): ${allowOrigins.join(', ') || 'none'}`;
}

/** Where the demo client application keeps the credentials the operator sent it. */
const CLIENT_CREDENTIALS_FILE = '.data/demo-clients.json';

/**
 * Registers the demo's clients on the first start. On later starts they are already in the
 * database and the demo client reads back the credentials it saved then: a secret is never
 * retrievable from the server. Without the saved file, clients are registered under new ids.
 */
async function demoClients(
  storage: Storage,
  databaseUrl: string,
  registrations: Record<DemoClient, ClientRegistration>,
): Promise<Record<DemoClient, IssuedClient>> {
  // Kept per database: credentials belong to the database that stores their hashes.
  let file: Record<string, Record<string, IssuedClient>> = {};
  try {
    file = JSON.parse(readFileSync(CLIENT_CREDENTIALS_FILE, 'utf8')) as typeof file;
  } catch {
    // First start: nothing saved yet.
  }
  const saved = (file[databaseUrl] ??= {});
  const issue = async (key: keyof typeof registrations): Promise<IssuedClient> => {
    const known = saved[key];
    const stored = known && (await storage.clients.find(known.clientId));
    if (stored) {
      // Started before on other ports (PORT): the client moves with them, or its sign-ins would
      // come back to a redirect URI it was not registered for.
      const { redirectUri } = registrations[key];
      if (redirectUri !== undefined && stored.redirectUri !== redirectUri) {
        await updateClient(storage, known.clientId, { redirectUri });
      }
      return known;
    }
    const { clientId, ...registration } = registrations[key];
    const taken = clientId !== undefined && (await storage.clients.find(clientId)) !== null;
    return (saved[key] = await registerClient(storage, taken ? registration : registrations[key]));
  };
  const issued = {} as Record<DemoClient, IssuedClient>;
  for (const key of DEMO_CLIENTS) issued[key] = await issue(key);
  // An in-memory database is gone at exit: nothing worth keeping.
  if (databaseUrl !== 'sqlite::memory:') {
    mkdirSync(dirname(CLIENT_CREDENTIALS_FILE), { recursive: true });
    writeFileSync(CLIENT_CREDENTIALS_FILE, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  }
  return issued;
}

/** Where the demo keeps the secret that seals its OpenID Connect signing keys. */
const KEY_SECRET_FILE = '.data/demo-oidc-key-secret';

/** The demo's audit trail, in its data folder whatever the database (docs/operating.md, Audit trail). */
const AUDIT_FILE = '.data/audit.jsonl';

/**
 * Writes the server's security-relevant events to {@link AUDIT_FILE}, closed after the servers
 * stopped. No `SIGHUP` handler for `reopen()`, as a server under logrotate has: here the signal
 * is a closed terminal, which must still stop the demo.
 */
function startAuditTrail(server: AuthorizationServer): void {
  mkdirSync(dirname(AUDIT_FILE), { recursive: true });
  const audit = auditTrail(server, { file: AUDIT_FILE });
  running.push({ name: 'Audit trail', close: () => audit.close() });
}

/**
 * The demo's key secret: made once, then read back, so the keys in its database open again (an
 * in-memory database has its keys for one run only: a secret for that run).
 */
function demoKeySecret(databaseUrl: string): string {
  if (databaseUrl === 'sqlite::memory:') return randomBytes(32).toString('base64url');
  try {
    return readFileSync(KEY_SECRET_FILE, 'utf8').trim();
  } catch {
    const secret = randomBytes(32).toString('base64url');
    mkdirSync(dirname(KEY_SECRET_FILE), { recursive: true });
    writeFileSync(KEY_SECRET_FILE, `${secret}\n`, { mode: 0o600 });
    return secret;
  }
}

/**
 * How to rotate the demo's signing keys with the CLI (docs/openid-connect.md): the CLI seals the
 * new keys with the same secret, read from where the demo read it.
 */
function rotateKeysHelp(databaseUrl: string): string {
  if (databaseUrl === 'sqlite::memory:') {
    return 'Signing keys: in memory, for this run only (set DATABASE_URL to keep them and rotate them with the CLI).';
  }
  const secret =
    process.env.OIDC_KEY_SECRET === undefined
      ? `OIDC_KEY_SECRET=$(cat ${KEY_SECRET_FILE})`
      : 'OIDC_KEY_SECRET="$OIDC_KEY_SECRET"';
  const database = databaseUrl.startsWith('sqlite:') ? databaseUrl : '"$DATABASE_URL"';
  // --audit-file: the rotation is a line of the demo's own audit trail, beside its logins.
  return `Rotate the signing keys (OIDC_KEY_SECRET: ${process.env.OIDC_KEY_SECRET === undefined ? `kept in ${KEY_SECRET_FILE}` : 'the one the demo was started with'}; the rotation is written to the audit trail):
  ${secret} npm run cli -- --database-url ${database} --audit-file ${AUDIT_FILE} keys rotate`;
}

async function listen(name: string, app: RequestListener, port: number): Promise<void> {
  const server: Server = createServer(app);
  server.listen(port, '127.0.0.1');
  try {
    await once(server, 'listening');
  } catch (err) {
    throw new Error(
      `${name}: cannot listen on 127.0.0.1:${port} (${(err as Error).message}). Set PORT to use other ports.`,
    );
  }
  running.push({
    name,
    // Stops accepting, lets requests in flight finish and closes the connections browsers keep
    // open; after 5 s whatever is left is cut.
    close: async () => {
      await closeGracefully(server, { timeoutMs: 5000 });
    },
  });
}

function parsePort(value: string): number {
  const port = Number(value);
  // PORT+2 must be a valid port too.
  if (!Number.isInteger(port) || port < 1 || port > 65533)
    throw new Error(`PORT must be an integer from 1 to 65533, not ${value}`);
  return port;
}

/**
 * A comma-separated list (`https://localhost:8443,https://127.0.0.1:8443`). Each origin is
 * validated by createAuthorizationServer, which names the one that is not an https origin.
 */
function parseOrigins(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
}

function parseJson(name: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new Error(`${name} must be JSON, e.g. [{"name":"Example","identifier":"https://id.example.com/"}]`);
  }
}

async function stop(): Promise<void> {
  for (const server of running.reverse()) await server.close().catch(() => undefined);
  running.length = 0;
}

// SIGTERM (a process manager, a container stop) and Ctrl-C: a graceful shutdown. The servers
// finish what they are answering, then the database closes, and the process ends by itself.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log(`\n${signal}: stopping the demo.`);
    // A safety net only: the shutdown leaves nothing behind, so the process exits well before.
    setTimeout(() => process.exit(1), 10_000).unref();
    void stop();
  });
}

main().catch(async (err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
  await stop();
});
