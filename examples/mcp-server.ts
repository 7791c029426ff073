// An app with an MCP server whose users sign in at an OpenID 2.0 provider: MCP clients (Claude
// Code, VS Code...) find the authorization server from the 401 at /mcp and get a token for it.
// SESSION_SECRET=$(openssl rand -base64 32) OPENID_PROVIDER=https://steamcommunity.com/openid \
//   npx tsx --tsconfig examples/tsconfig.json examples/mcp-server.ts
// then: claude mcp add --transport http --client-id notes-mcp --callback-port 8976 notes http://localhost:3000/mcp
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import {
  ClientIdTakenError,
  bearerOf,
  connectStorage,
  createAuthorizationServer,
  metadataRouter,
  oauthRouter,
  registerClient,
  requireBearer,
} from 'openid-oauth-bridge';

const port = Number(process.env.PORT ?? 3000);
const baseUrl = `http://localhost:${port}`; // in production: your public https URL
const mcpUrl = `${baseUrl}/mcp`;
const storage = await connectStorage(process.env.DATABASE_URL ?? 'sqlite:./.data/mcp-server.db', {
  migrate: true,
});
const server = createAuthorizationServer({
  baseUrl,
  storage,
  providers: [{ name: 'Example ID', identifier: process.env.OPENID_PROVIDER ?? 'https://id.example.com/' }],
  session: { secret: process.env.SESSION_SECRET }, // at least 32 random characters
  scopes: { notes: 'Read and write your notes' },
  // The MCP server is what its tokens are for (RFC 8707), and it has protected resource metadata.
  resources: [{ resource: mcpUrl, name: 'Notes', scopes: ['notes'], default: true }],
});

try {
  // The MCP client's user is given this id (Claude Code: --client-id notes-mcp --callback-port 8976).
  await registerClient(server, {
    clientId: 'notes-mcp',
    applicationName: 'Notes for your AI assistant',
    redirectUri: 'http://localhost:8976/callback',
    public: true, // no secret: PKCE
    scopes: ['notes'],
  });
} catch (err) {
  if (!(err instanceof ClientIdTakenError)) throw err;
}

const notes = new Map<string, string[]>(); // a real app keeps them in its database

/**
 * The MCP server for the user a checked token speaks for, one per request (stateless). Tools that
 * need scopes of their own: examples/realms-mcp.ts.
 */
function notesServer(userId: string): McpServer {
  const mcp = new McpServer({ name: 'notes', version: '1.0.0' });
  const text = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }] });
  mcp.registerTool('list_notes', { description: 'Your notes', annotations: { readOnlyHint: true } }, () =>
    text(notes.get(userId) ?? []),
  );
  mcp.registerTool(
    'add_note',
    { description: 'Adds a note', inputSchema: { note: z.string().max(1000) } },
    ({ note }) => {
      notes.set(userId, [...(notes.get(userId) ?? []), note]);
      return text(notes.get(userId));
    },
  );
  return mcp;
}

const app = express();
app.use(metadataRouter(server)); // RFC 8414 and RFC 9728 documents, at the origin's root
app.use(oauthRouter(server)); // /oauth/authorize, /oauth/token, ...
// Every method needs a token for the MCP server; the 401 names its metadata and the scope.
app.all('/mcp', requireBearer(server, { resource: mcpUrl, scopes: ['notes'] }));
app.post('/mcp', express.json(), async (req, res) => {
  const { userId } = bearerOf(res);
  // A client's own token (client credentials) has no member, so no notes: refused here.
  if (userId === null) return void res.status(403).json({ error: 'The notes are a member’s.' });
  const mcp = notesServer(userId);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => void mcp.close());
  await mcp.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
app.all('/mcp', (_req, res) => void res.set('Allow', 'POST').sendStatus(405)); // no sessions, no SSE stream
app.listen(port, () => console.log(`MCP server at ${mcpUrl}`));
