/**
 * examples/mcp-server.ts runs as its comment says, and an MCP client connects to it by itself: the
 * official SDK's client, with the client id the example registers, finds the authorization server
 * from the 401 at /mcp, the person signs in at the development provider and trusts it, and the
 * tools answer for that person.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDevelopmentProvider } from '../../src/testing/index.js';
import {
  MCP_SDKS,
  MemoryOAuthProvider,
  PersonAtServer,
  connectSignedIn,
  recordingFetch,
} from '../support/mcp.js';
import { freePort, runExample, type RunningExample } from './run-example.js';

let provider: Awaited<ReturnType<typeof startDevelopmentProvider>>;
let example: RunningExample;
let port: number;

beforeAll(async () => {
  provider = await startDevelopmentProvider({ port: 0 });
  port = await freePort();
  example = runExample('mcp-server.ts', {
    PORT: String(port),
    SESSION_SECRET: 'an example test session secret, 32+ characters',
    OPENID_PROVIDER: provider.identifier,
    DATABASE_URL: 'sqlite::memory:',
  });
  await example.waitFor(/MCP server at (\S+)/, 30_000);
}, 60_000);
afterAll(async () => {
  await example?.stop();
  await provider?.close();
});

it.each(MCP_SDKS.map((sdk, i) => ({ sdk, user: `notes-user-${i}` })))(
  '$sdk.name signs in and calls its tools',
  async ({ sdk, user }) => {
    const baseUrl = `http://localhost:${port}`;
    const person = new PersonAtServer(baseUrl, `http://127.0.0.1:${port}`, user, 'Example ID');
    const oauth = new MemoryOAuthProvider({
      clientId: 'notes-mcp',
      redirectUrl: 'http://localhost:8976/callback',
    });
    const mcp = await connectSignedIn(sdk, `${baseUrl}/mcp`, oauth, person, recordingFetch().fetch);
    expect(await mcp.callTool('list_notes')).toEqual([]);
    expect(await mcp.callTool('add_note', { note: 'Buy milk' })).toEqual(['Buy milk']);
    expect(await mcp.callTool('list_notes')).toEqual(['Buy milk']);
    await mcp.close();
  },
  60_000,
);
