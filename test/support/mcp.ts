/**
 * MCP clients as AI assistants run them: the official TypeScript SDK's client, unmodified, at its
 * newest v1 (`@modelcontextprotocol/sdk`), at v1 1.23.0 (`mcp-sdk-1-23`) and as the v2 client
 * package (`@modelcontextprotocol/client`). Each gets the `OAuthClientProvider` a host app writes
 * (here kept in memory, with a pre-registered client id), and the authorization URL it hands over
 * is opened by a scripted browser that signs in at the development provider and trusts the client.
 * Every HTTP exchange of the SDK is recorded, so a test can read the challenges and token requests.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError as UnauthorizedV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as Client123 } from 'mcp-sdk-1-23/client/index.js';
import { StreamableHTTPClientTransport as Transport123 } from 'mcp-sdk-1-23/client/streamableHttp.js';
import { UnauthorizedError as Unauthorized123 } from 'mcp-sdk-1-23/client/auth.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedV2,
} from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import { Browser, firstForm, signInAtDevelopmentProvider } from './browser.js';
import { selectionLinks } from './python-flow.js';

/** One HTTP exchange of an MCP client, as the server answered it. */
export interface Exchange {
  url: string;
  method: string;
  /** The request body as sent (a token request's form, a JSON-RPC message). */
  body: string;
  status: number;
  wwwAuthenticate: string | null;
}

/** A `fetch` that records every exchange in `exchanges`. */
export function recordingFetch(): { fetch: typeof fetch; exchanges: Exchange[] } {
  const exchanges: Exchange[] = [];
  const recording: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    exchanges.push({
      url,
      method: init?.method ?? (input instanceof Request ? input.method : 'GET'),
      body: init?.body === undefined || init.body === null ? '' : String(init.body),
      status: res.status,
      wwwAuthenticate: res.headers.get('www-authenticate'),
    });
    return res;
  };
  return { fetch: recording, exchanges };
}

/** A pre-registered client, as the operator gave it to the MCP client's user. */
export interface RegisteredMcpClient {
  clientId: string;
  redirectUrl: string;
}

/**
 * The `OAuthClientProvider` of a host app (both SDK majors take this shape): it keeps what the
 * SDK saves, unchanged, and queues the authorization URLs the SDK would open in a browser.
 */
export class MemoryOAuthProvider {
  readonly authorizationUrls: URL[] = [];
  private saved: { tokens?: unknown; verifier?: string; discovery?: unknown } = {};

  constructor(private readonly client: RegisteredMcpClient) {}

  get redirectUrl(): string {
    return this.client.redirectUrl;
  }

  get clientMetadata() {
    return {
      client_name: 'MCP SDK test client',
      redirect_uris: [this.client.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return randomUUID();
  }

  clientInformation() {
    return { client_id: this.client.clientId };
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each SDK version has its own token type
  tokens(): any {
    return this.saved.tokens;
  }

  saveTokens(tokens: unknown): void {
    this.saved.tokens = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrls.push(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.saved.verifier = verifier;
  }

  codeVerifier(): string {
    if (this.saved.verifier === undefined) throw new Error('no code verifier saved');
    return this.saved.verifier;
  }

  /** Kept beside the code verifier, so the callback leg checks it comes from the same server. */
  saveDiscoveryState(state: unknown): void {
    this.saved.discovery = state;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each SDK version has its own state type
  discoveryState(): any {
    return this.saved.discovery;
  }

  invalidateCredentials(scope: string): void {
    if (scope === 'all' || scope === 'tokens') delete this.saved.tokens;
    if (scope === 'all' || scope === 'verifier') delete this.saved.verifier;
    if (scope === 'all' || scope === 'discovery') delete this.saved.discovery;
  }

  /** The authorization URL the SDK handed over last; fails if it handed none. */
  takeAuthorizationUrl(): URL {
    const url = this.authorizationUrls.shift();
    if (url === undefined) throw new Error('the MCP client started no authorization');
    return url;
  }
}

/**
 * The `OAuthClientProvider` of a host app with no client id of its own: the SDK gives the server
 * `clientMetadataUrl` as its client id when the server supports documents, and registers the
 * client (RFC 7591) otherwise, or when no URL is given; it saves what it got here.
 */
export class SelfRegisteringOAuthProvider extends MemoryOAuthProvider {
  private information: unknown;

  constructor(
    redirectUrl: string,
    /** The https URL of the client's metadata document; none: dynamic registration. */
    readonly clientMetadataUrl?: string,
  ) {
    super({ clientId: '', redirectUrl });
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each SDK version has its own client information type
  override clientInformation(): any {
    return this.information;
  }

  saveClientInformation(information: unknown): void {
    this.information = information;
  }
}

/** What the tests use of a connected SDK client. */
export interface McpConnection {
  callTool(name: string, args?: Record<string, unknown>): Promise<unknown>;
  /** Hands the redirect back to the client (`transport.finishAuth`). */
  finishAuth(callback: URL): Promise<void>;
  close(): Promise<void>;
}

/** One of the official SDK clients. */
export interface McpSdk {
  name: string;
  /** The transport and client for `url`; `connect` rejects with `UnauthorizedError` until signed in. */
  open(
    url: string,
    provider: MemoryOAuthProvider,
    fetchFn: typeof fetch,
  ): McpConnection & { connect(): Promise<void> };
  isUnauthorized(err: unknown): boolean;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- the three SDKs' types differ in detail; the calls are the same */
function openWith(
  Client: new (info: { name: string; version: string }) => any,
  Transport: new (url: URL, opts: any) => any,
  finishAuth: (transport: any, callback: URL) => Promise<void>,
) {
  return (url: string, provider: MemoryOAuthProvider, fetchFn: typeof fetch) => {
    const transport = new Transport(new URL(url), { authProvider: provider, fetch: fetchFn });
    const client = new Client({ name: 'openid-oauth-bridge-tests', version: '1.0.0' });
    return {
      connect: () => client.connect(transport) as Promise<void>,
      async callTool(name: string, args: Record<string, unknown> = {}) {
        const result = (await client.callTool({ name, arguments: args })) as {
          content: { type: string; text: string }[];
          isError?: boolean;
        };
        expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
        return JSON.parse(result.content[0]!.text) as unknown;
      },
      finishAuth: (callback: URL) => finishAuth(transport, callback),
      close: () => client.close() as Promise<void>,
    };
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** The clients the tests connect: v1 newest, v1 1.23.0, v2. */
export const MCP_SDKS: McpSdk[] = [
  {
    name: `@modelcontextprotocol/sdk ${sdkVersion('@modelcontextprotocol/sdk')}`,
    open: openWith(ClientV1, TransportV1, (t, callback) => t.finishAuth(callback.searchParams.get('code'))),
    isUnauthorized: (err) => err instanceof UnauthorizedV1,
  },
  {
    name: `@modelcontextprotocol/sdk ${sdkVersion('mcp-sdk-1-23')}`,
    open: openWith(Client123, Transport123, (t, callback) => t.finishAuth(callback.searchParams.get('code'))),
    isUnauthorized: (err) => err instanceof Unauthorized123,
  },
  {
    name: `@modelcontextprotocol/client ${sdkVersion('@modelcontextprotocol/client')}`,
    // v2 takes the whole callback, and checks its `iss` (RFC 9207) when the server sends one.
    open: openWith(ClientV2, TransportV2, (t, callback) => t.finishAuth(callback.searchParams)),
    isUnauthorized: (err) => err instanceof UnauthorizedV2,
  },
];

/** The installed version, from the package's folder (not every package exports its package.json). */
function sdkVersion(name: string): string {
  const root = join(import.meta.dirname, '..', '..', 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(root, 'utf8')) as { version: string }).version;
}

/**
 * A person in a browser at the authorization server (`baseUrl`, reached at `origin`): opens the
 * authorization URL an MCP client handed over, picks the development provider on the selection
 * page, signs in there as `user`, trusts the client on the consent page, and resolves the
 * redirect back to the client (with `code`, `state` and `iss`). The same browser keeps its login.
 */
export class PersonAtServer {
  private readonly browser: Browser;
  /** Every consent page the person answered, in order (HTML). */
  readonly consentPages: string[] = [];

  constructor(
    private readonly baseUrl: string,
    private readonly origin: string,
    private readonly user: string,
    /** The provider's name on the selection page. */
    private readonly provider = 'Development provider',
  ) {
    this.browser = new Browser(baseUrl);
  }

  async authorize(authorizationUrl: URL | string): Promise<URL> {
    let { res, location } = await this.follow(String(authorizationUrl));
    if (res.status === 200 && location === null) {
      const page = await res.text();
      const href = selectionLinks(page).get(this.provider);
      // One provider only: no selection page but the consent page, once signed in.
      if (href !== undefined) ({ res, location } = await this.follow(href));
      else return this.trust(page);
    }
    if (
      location !== null &&
      new URL(location).origin !== new URL(this.baseUrl).origin &&
      !this.isClient(location)
    ) {
      const callback = await signInAtDevelopmentProvider(location, this.user);
      ({ res, location } = await this.follow(callback));
    }
    if (location !== null) return new URL(location);
    expect(res.status).toBe(200);
    return this.trust(await res.text());
  }

  private isClient(location: string): boolean {
    return new URL(location).searchParams.has('code') || new URL(location).searchParams.has('error');
  }

  private async trust(consentPage: string): Promise<URL> {
    this.consentPages.push(consentPage);
    const form = firstForm(consentPage);
    expect(form, consentPage).not.toBeNull();
    const res = await this.browser.request(this.origin, form!.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(this.baseUrl).origin },
      body: new URLSearchParams({ ...form!.fields, decision: 'allow' }),
    });
    expect(res.status, await res.clone().text()).toBe(303);
    return new URL(res.headers.get('location')!);
  }

  /** Follows the server's own redirects; stops at a page or at a redirect elsewhere. */
  private async follow(url: string): Promise<{ res: Response; location: string | null }> {
    const own = new URL(this.baseUrl).origin;
    let res = await this.browser.request(this.origin, url);
    let location = res.headers.get('location');
    while (location !== null && new URL(location, this.baseUrl).origin === own && !this.isClient(location)) {
      res = await this.browser.request(this.origin, location);
      location = res.headers.get('location');
    }
    return { res, location: location === null ? null : new URL(location, this.baseUrl).href };
  }
}

/**
 * Connects `sdk` to the MCP server at `url` as a host app does: the first connection starts an
 * authorization, the person signs in and trusts the client, the redirect goes back to the
 * transport, and the client connects again.
 */
export async function connectSignedIn(
  sdk: McpSdk,
  url: string,
  provider: MemoryOAuthProvider,
  person: PersonAtServer,
  fetchFn: typeof fetch,
): Promise<McpConnection> {
  const first = sdk.open(url, provider, fetchFn);
  const refused = await first.connect().then(
    () => null,
    (err: unknown) => err,
  );
  expect(sdk.isUnauthorized(refused), String(refused)).toBe(true);
  await first.finishAuth(await person.authorize(provider.takeAuthorizationUrl()));
  await first.close();
  const connection = sdk.open(url, provider, fetchFn);
  await connection.connect();
  return connection;
}
