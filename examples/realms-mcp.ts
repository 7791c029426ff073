/**
 * The demo's MCP server: the realms as tools for an AI assistant (Claude Code, VS Code...), made
 * with the official SDK (`@modelcontextprotocol/sdk`) over Streamable HTTP, stateless (a server and
 * a transport per request), at `${publicUrl}/mcp`.
 *
 * For the authorization server it is a resource of its own (RFC 8707): a token must have been
 * issued for it, and its protected resource metadata (RFC 9728), which the 401 names, tells an MCP
 * client where to sign in and which scopes to ask for.
 *
 * Each tool needs scopes. A tool call is a POST whose JSON-RPC body names the tool, so the body is
 * read before the SDK's transport and the guard of that tool's scopes runs: a token without them
 * gets the library's 403 `insufficient_scope` challenge, the same string for every call of that
 * tool, and the MCP client asks the user for more (a step-up authorization). The tool handlers
 * only run behind that guard.
 */
import express, { type ErrorRequestHandler, type RequestHandler, type Router } from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { bearerOf, requireBearer, type AuthorizationServer, type BearerContext } from '../src/index.js';
import { REALMS_SCOPE, REALMS_WRITE_SCOPE, type Realms } from './realms.js';

/** Where the MCP server answers, under the app's public URL. */
export const MCP_PATH = '/mcp';

/** The scopes each tool needs; any other request (initialize, tools/list...) needs `realms:read`. */
const TOOL_SCOPES = new Map<string, readonly string[]>([
  ['whoami', [REALMS_SCOPE]],
  ['list_realms', [REALMS_SCOPE]],
  ['write_realm', [REALMS_SCOPE, REALMS_WRITE_SCOPE]],
]);

export interface RealmsMcpOptions {
  /** The MCP server's URL, declared as a resource of the authorization server. */
  resource: string;
  realms: Realms;
}

/** The MCP server at `MCP_PATH`, for every method; mount it where the library's routers are. */
export function realmsMcpRouter(server: AuthorizationServer, options: RealmsMcpOptions): Router {
  const router = express.Router();
  router.post(MCP_PATH, express.json({ limit: '1mb' }), unreadableBody);
  router.all(MCP_PATH, guardByTool(server, options.resource));
  router.post(MCP_PATH, (req, res, next) => {
    serve(server, options.realms, req, res).catch(next);
  });
  // Stateless: no stream for server-initiated messages (GET) and no session to end (DELETE).
  router.all(MCP_PATH, (_req, res) => {
    res.set('Allow', 'POST').status(405).json(jsonRpcError(-32000, 'Method not allowed.'));
  });
  return router;
}

/**
 * Runs the `requireBearer` of the scopes the request needs: the union of the tools it calls
 * (a JSON-RPC batch may call several), at least `realms:read`. One guard per set of scopes, so each
 * answers with the same challenge every time; those of the tools are built at once, so a scope the
 * server does not offer fails at start.
 */
function guardByTool(server: AuthorizationServer, resource: string): RequestHandler {
  const guards = new Map<string, RequestHandler>();
  const guardOf = (scopes: string[]): RequestHandler => {
    const key = scopes.join(' ');
    let guard = guards.get(key);
    if (!guard) guards.set(key, (guard = requireBearer(server, { resource, scopes })));
    return guard;
  };
  for (const name of TOOL_SCOPES.keys()) guardOf(scopesOfRequest({ method: 'tools/call', params: { name } }));
  return (req, res, next) => {
    guardOf(scopesOfRequest(res.locals.unreadable ? undefined : req.body))(req, res, next);
  };
}

/** The scopes a request's JSON-RPC message (or batch) needs, in a fixed order. */
function scopesOfRequest(body: unknown): string[] {
  const needed = new Set<string>([REALMS_SCOPE]);
  for (const message of Array.isArray(body) ? body : [body]) {
    const call = message as { method?: unknown; params?: { name?: unknown } } | null;
    if (call?.method !== 'tools/call' || typeof call.params?.name !== 'string') continue;
    for (const scope of TOOL_SCOPES.get(call.params.name) ?? []) needed.add(scope);
  }
  return [REALMS_SCOPE, REALMS_WRITE_SCOPE].filter((scope) => needed.has(scope));
}

/**
 * A body that is not JSON is answered with a JSON-RPC parse error, but after the guard: a request
 * without a token gets its 401 whatever it sends.
 */
const unreadableBody: ErrorRequestHandler = (_err, _req, res, next) => {
  res.locals.unreadable = true;
  next();
};

async function serve(
  server: AuthorizationServer,
  realms: Realms,
  req: express.Request,
  res: express.Response,
): Promise<void> {
  if (res.locals.unreadable) {
    res.status(400).json(jsonRpcError(-32700, 'Parse error: the body is not JSON.'));
    return;
  }
  const mcp = realmsMcpServer(server, realms, bearerOf(res));
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void mcp.close();
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res, req.body);
}

/** The tools, for the caller the access token speaks for. */
function realmsMcpServer(server: AuthorizationServer, realms: Realms, caller: BearerContext): McpServer {
  const mcp = new McpServer({ name: 'demo-realms', version: '1.0.0' });
  mcp.registerTool(
    'whoami',
    {
      title: 'Who am I',
      description:
        'The signed-in user (sub, as in ID tokens, and their OpenID identifier) and this client; a client acting as itself has no member.',
      annotations: { readOnlyHint: true },
    },
    async () => {
      // A client's own token (the client credentials grant): no member, the client is the subject.
      if (caller.userId === null) {
        return asText({
          member: null,
          sub: caller.clientId,
          client_id: caller.clientId,
          scope: caller.scopes.join(' '),
        });
      }
      const user = await server.storage.users.find?.(caller.userId);
      return asText({
        member: { sub: caller.userId, identifier: user?.identifier ?? null },
        sub: caller.userId,
        identifier: user?.identifier ?? null,
        client_id: caller.clientId,
        scope: caller.scopes.join(' '),
      });
    },
  );
  mcp.registerTool(
    'list_realms',
    {
      title: 'List realms',
      description: "The user's realms, as GET /v1/realms shows them.",
      annotations: { readOnlyHint: true },
    },
    () => (caller.userId === null ? noMember() : asText({ realms: realms.list(caller.userId) })),
  );
  mcp.registerTool(
    'write_realm',
    {
      title: 'Add a realm',
      description: "Adds a realm to the user's list (needs the realms:write scope).",
      inputSchema: { name: z.string().trim().min(1).max(100).describe('The name of the new realm') },
    },
    ({ name }) => (caller.userId === null ? noMember() : asText({ realm: realms.add(caller.userId, name) })),
  );
  return mcp;
}

/** A tool that acts for a member, called with a client's own token: a tool error, said plainly. */
function noMember(): { content: { type: 'text'; text: string }[]; isError: true } {
  return {
    ...asText({
      error: 'This token is the client’s own (client credentials): it has no member, and no realms.',
    }),
    isError: true,
  };
}

function asText(value: unknown): { content: { type: 'text'; text: string }[] } {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

function jsonRpcError(code: number, message: string) {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}
