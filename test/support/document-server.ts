/**
 * An https server on 127.0.0.1 that serves client metadata documents, as an MCP client's web
 * site does, with a self-signed certificate made here by openssl (for `localhost` and
 * `127.0.0.1`), which the authorization server is given as `clientMetadataDocuments.ca`. It counts
 * the requests for each path, so a test can tell how many fetches a flow made.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { answerConsent, authorizeWithLogin } from './flow.js';

/** How one path answers: a document (JSON, with headers) or a handler of its own. */
export type DocumentRoute =
  | { json: unknown; headers?: Record<string, string>; delayMs?: number }
  | ((req: IncomingMessage, res: ServerResponse) => void);

export interface DocumentServer {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  /** `https://localhost:<port>`: the same server by name. */
  localhostOrigin: string;
  /** The server's certificate (PEM), self-signed: trust it as a CA. */
  ca: string;
  /** Serves `route` at `path` from now on (replacing any route there). */
  serve(path: string, route: DocumentRoute): void;
  /** Requests received at `path` so far. */
  requests(path: string): number;
  close(): Promise<void>;
}

let certificate: { key: string; cert: string } | undefined;

/** A self-signed certificate for localhost and 127.0.0.1, made once per test file. */
function selfSigned(): { key: string; cert: string } {
  certificate ??= makeCertificate('/CN=localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1');
  return certificate;
}

/** A new self-signed P-256 certificate (openssl), for `subject` and, if given, a subjectAltName extension. */
export function makeCertificate(subject: string, altNames?: string): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cimd-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        subject,
        ...(altNames === undefined ? [] : ['-addext', altNames]),
      ],
      { stdio: 'ignore' },
    );
    return {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startDocumentServer(): Promise<DocumentServer> {
  const { key, cert } = selfSigned();
  const routes = new Map<string, DocumentRoute>();
  const counts = new Map<string, number>();
  const server: Server = createServer({ key, cert }, (req, res) => {
    const path = new URL(req.url!, 'https://x').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (route === undefined) {
      res.writeHead(404).end();
    } else if (typeof route === 'function') {
      route(req, res);
    } else {
      const send = () =>
        res
          .writeHead(200, { 'content-type': 'application/json', ...route.headers })
          .end(JSON.stringify(route.json));
      if (route.delayMs) setTimeout(send, route.delayMs);
      else send();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://127.0.0.1:${port}`,
    localhostOrigin: `https://localhost:${port}`,
    ca: cert,
    serve: (path, route) => void routes.set(path, route),
    requests: (path) => counts.get(path) ?? 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A valid document for `clientId`, as an MCP client publishes one; `extra` adds or replaces fields. */
export function clientDocument(
  clientId: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    client_id: clientId,
    client_name: 'Agent Desk',
    redirect_uris: ['http://localhost/callback', 'https://desk.example/oauth/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...extra,
  };
}

/** The PKCE verifier of {@link documentClientCode}, and its S256 challenge. */
export const DOCUMENT_CLIENT_VERIFIER = 'a-code-verifier-that-is-long-enough-for-rfc-7636-xyz';
export const DOCUMENT_CLIENT_CHALLENGE = createHash('sha256')
  .update(DOCUMENT_CLIENT_VERIFIER)
  .digest('base64url');

/** The authorization request of a document client (PKCE, a loopback redirect on port 53682). */
export function documentClientQuery(clientId: string, extra: Record<string, string> = {}) {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: 'http://localhost:53682/callback',
    scope: 'realms',
    state: 'st',
    code_challenge: DOCUMENT_CLIENT_CHALLENGE,
    code_challenge_method: 'S256',
    ...extra,
  };
}

/**
 * A document client's code flow: login at the development provider, consent (checked with
 * `onConsent`), the redirect with a code, and its exchange with the verifier; resolves the token
 * response.
 */
export async function documentClientTokens(
  t: TestApp,
  clientId: string,
  onConsent: (page: string) => void = () => {},
) {
  let res = await authorizeWithLogin(t, documentClientQuery(clientId));
  expect(res.status).toBe(200);
  onConsent(res.text);
  res = await answerConsent(t, res.text, 'allow');
  expect(res.status).toBe(303);
  const back = new URL(res.headers.location!);
  expect(back.origin).toBe('http://localhost:53682');
  const token = await t.agent
    .post('/oauth/token')
    .type('form')
    .send({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      client_id: clientId,
      redirect_uri: 'http://localhost:53682/callback',
      code_verifier: DOCUMENT_CLIENT_VERIFIER,
    });
  expect(token.status).toBe(200);
  return token.body as { access_token: string; refresh_token: string };
}
