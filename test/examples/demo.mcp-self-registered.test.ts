/**
 * The demo's MCP server and the official SDK clients, unmodified, without a client id of their
 * own (issue 39): each connects through a client metadata document served over https by this test
 * (the demo trusts its origin on loopback through CLIENT_METADATA_ALLOW_ORIGINS, and its
 * self-signed CA through NODE_EXTRA_CA_CERTS), then again through dynamic registration. The
 * person signs in at the OpenID 2.0 development provider and trusts the client on a consent page
 * that says it is not registered by the operator.
 */
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo, type RunningDemo } from '../support/demo-process.js';
import { startDocumentServer, type DocumentServer } from '../support/document-server.js';
import {
  MCP_SDKS,
  PersonAtServer,
  SelfRegisteringOAuthProvider,
  connectSignedIn,
  recordingFetch,
  type Exchange,
  type McpSdk,
} from '../support/mcp.js';

const dir = mkdtempSync(join(tmpdir(), 'oob-demo-self-registered-'));
let docs: DocumentServer;
let demo: RunningDemo;
/** Where the demo listens (its PUBLIC_URL says localhost). */
let origin: string;
let mcpUrl: string;

beforeAll(async () => {
  docs = await startDocumentServer();
  const caFile = join(dir, 'documents-ca.pem');
  writeFileSync(caFile, docs.ca);
  demo = await startDemo({ CLIENT_METADATA_ALLOW_ORIGINS: docs.origin, NODE_EXTRA_CA_CERTS: caFile });
  origin = `http://127.0.0.1:${new URL(demo.serverUrl).port}`;
  mcpUrl = `${demo.serverUrl}/mcp`;
}, 90_000);
afterAll(async () => {
  await demo?.stop();
  await docs?.close();
  rmSync(dir, { recursive: true, force: true });
});

const tokenRequests = (exchanges: Exchange[], grantType: string) =>
  exchanges
    .filter((e) => e.url.endsWith('/oauth/token') && e.method === 'POST')
    .map((e) => new URLSearchParams(e.body))
    .filter((form) => form.get('grant_type') === grantType);

it('the banner says how clients without a client id connect, and which local origin serves documents', () => {
  expect(demo.output()).toContain('without --client-id: they register themselves');
  expect(demo.output()).toContain('at most 29 a minute from one address');
  expect(demo.output()).toContain(
    `Documents on this machine (CLIENT_METADATA_ALLOW_ORIGINS; their CA from NODE_EXTRA_CA_CERTS): ${docs.origin}`,
  );
});

it('the metadata offers documents, public clients and registration', async () => {
  const metadata = (await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json()) as Record<
    string,
    unknown
  >;
  expect(metadata.client_id_metadata_document_supported).toBe(true);
  expect(metadata.token_endpoint_auth_methods_supported).toContain('none');
  expect(metadata.registration_endpoint).toBe(`${demo.serverUrl}/oauth/register`);
});

describe.each(MCP_SDKS.map((sdk, i) => ({ sdk, i })))(
  '$sdk.name',
  ({ sdk, i }: { sdk: McpSdk; i: number }) => {
    it('connects through a client metadata document, calls whoami, connects again without a fetch, refreshes naming the resource', async () => {
      // Its document lists a portless loopback redirect, and the client binds a port of its own
      // (Claude Code's way): any port matches.
      const documentPath = `/clients/sdk-${i}.json`;
      const clientId = `${docs.origin}${documentPath}`;
      docs.serve(documentPath, {
        json: {
          client_id: clientId,
          client_name: `Agent Desk ${i}`,
          redirect_uris: ['http://localhost/callback'],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        },
      });
      const redirectPort = 40_000 + i;
      const provider = new SelfRegisteringOAuthProvider(
        `http://localhost:${redirectPort}/callback`,
        clientId,
      );
      const recorder = recordingFetch();
      const person = new PersonAtServer(demo.serverUrl, origin, `document-user-${i}`);
      const mcp = await connectSignedIn(sdk, mcpUrl, provider, person, recorder.fetch);

      expect(recorder.exchanges.some((e) => e.url.endsWith('/oauth/register'))).toBe(false);
      const [exchange] = tokenRequests(recorder.exchanges, 'authorization_code');
      expect(exchange?.get('client_id')).toBe(clientId);
      expect(exchange?.get('resource')).toBe(mcpUrl);
      const consent = person.consentPages.at(-1)!;
      expect(consent).toContain(`Do you trust Agent Desk ${i}?`);
      expect(consent).toContain('This application is not registered by this site');
      expect(consent).toContain(`<strong>${new URL(docs.origin).host}</strong>`);
      expect(consent).toContain(`<strong>localhost:${redirectPort}</strong>`);
      expect(await mcp.callTool('whoami')).toMatchObject({
        client_id: clientId,
        identifier: `${demo.providerUrl}/user/document-user-${i}`,
        scope: 'realms:read',
      });
      expect(docs.requests(documentPath)).toBe(1);
      await mcp.close();

      // A second connection, with the tokens the host app kept: the document is not fetched again.
      const again = sdk.open(mcpUrl, provider, recorder.fetch);
      await again.connect();
      expect(await again.callTool('whoami')).toMatchObject({ client_id: clientId });
      expect(docs.requests(documentPath)).toBe(1);

      const tokens = provider.tokens() as { access_token: string; refresh_token?: string };
      expect(tokens.refresh_token).toBeTruthy();
      provider.saveTokens({ ...tokens, access_token: 'no-longer-valid' });
      expect(await again.callTool('whoami')).toMatchObject({ client_id: clientId });
      const [refresh] = tokenRequests(recorder.exchanges, 'refresh_token');
      expect(refresh?.get('client_id')).toBe(clientId);
      expect(refresh?.get('resource')).toBe(mcpUrl);
      expect(docs.requests(documentPath)).toBe(1);
      await again.close();
    }, 90_000);

    it('connects through dynamic registration, calls whoami, refreshes naming the resource', async () => {
      const redirectUrl = `http://127.0.0.1:${41_000 + i}/callback`;
      const provider = new SelfRegisteringOAuthProvider(redirectUrl);
      const recorder = recordingFetch();
      const person = new PersonAtServer(demo.serverUrl, origin, `registered-user-${i}`);
      const mcp = await connectSignedIn(sdk, mcpUrl, provider, person, recorder.fetch);

      const registrations = recorder.exchanges.filter((e) => e.url === `${demo.serverUrl}/oauth/register`);
      expect(registrations.map((e) => e.status)).toEqual([201]);
      const { client_id: clientId } = provider.clientInformation() as { client_id: string };
      expect(clientId).toBeTruthy();
      expect(clientId).not.toMatch(/^https:/);
      const consent = person.consentPages.at(-1)!;
      expect(consent).toContain('registered itself with this site');
      expect(consent).toContain(`<strong>${new URL(redirectUrl).host}</strong>`);
      expect(await mcp.callTool('whoami')).toMatchObject({
        client_id: clientId,
        identifier: `${demo.providerUrl}/user/registered-user-${i}`,
      });

      const tokens = provider.tokens() as { access_token: string };
      provider.saveTokens({ ...tokens, access_token: 'no-longer-valid' });
      expect(await mcp.callTool('whoami')).toMatchObject({ client_id: clientId });
      const [refresh] = tokenRequests(recorder.exchanges, 'refresh_token');
      expect(refresh?.get('client_id')).toBe(clientId);
      expect(refresh?.get('resource')).toBe(mcpUrl);
      await mcp.close();
    }, 90_000);
  },
);

/** POST /oauth/register from `localAddress` (any 127.0.0.0/8 address is this machine). */
function registerFrom(localAddress: string): Promise<{ status: number; retryAfter?: string }> {
  const body = JSON.stringify({
    client_name: 'A client that registers at every connection',
    redirect_uris: ['http://127.0.0.1/callback'],
    token_endpoint_auth_method: 'none',
  });
  return new Promise((resolve, reject) => {
    const req = request(
      `${origin}/oauth/register`,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => {
          const retryAfter = res.headers['retry-after'];
          resolve({ status: res.statusCode!, ...(retryAfter === undefined ? {} : { retryAfter }) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

it('the 30th registration from one address within a minute is 429 with Retry-After; another address still registers', async () => {
  const answers = [];
  for (let n = 0; n < 30; n += 1) answers.push(await registerFrom('127.0.0.2'));
  expect(answers.slice(0, 29).map((a) => a.status)).toEqual(Array(29).fill(201));
  expect(answers[29]!.status).toBe(429);
  const retryAfter = Number(answers[29]!.retryAfter);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect((await registerFrom('127.0.0.3')).status).toBe(201);
}, 60_000);
