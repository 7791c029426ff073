/**
 * A client application, as a third party would write it: it knows the authorization server only
 * by its public URL and its own registration, and talks to it over HTTP like any OAuth 2.0
 * client. It runs the authorization code grant (with PKCE) on `/` and the implicit grant in the
 * browser on `/implicit`.
 */
import { createHash, randomBytes } from 'node:crypto';
import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import { html, page, type Markup } from './html.js';
import { implicitPage, implicitScript } from './implicit-page.js';

export interface ClientAppOptions {
  /** This app's own URL, e.g. `http://127.0.0.1:3001`. */
  url: string;
  /** The authorization server's public URL: its root resource and its API live there. */
  serverUrl: string;
  codeClient: { clientId: string; clientSecret: string };
  implicitClient: { clientId: string };
  /** Providers to offer a direct login with (the `opIdentifier` parameter). */
  providers: { name: string; identifier: string }[];
}

/** What this app remembers per browser, keyed by its own cookie. */
interface ClientSession {
  /** The authorization request in flight; the callback must carry the same state. */
  pending?: { state: string; codeVerifier: string };
  tokens?: { accessToken: string; refreshToken: string; expiresAt: number };
}

const COOKIE = 'demo_client_sid';

export function createClientApp(options: ClientAppOptions): express.Express {
  const own = new URL(options.url);
  const callbackUri = new URL('/callback', own).href;
  const implicitUri = new URL('/implicit', own).href;
  const realmsUrl = `${options.serverUrl.replace(/\/+$/, '')}/v1/realms`;
  const authorizedApplicationsUrl = `${options.serverUrl.replace(/\/+$/, '')}/oauth/applications`;
  const sessions = new Map<string, ClientSession>();
  const endpoints = discovery(options.serverUrl);

  const app = express();
  app.disable('x-powered-by');
  app.use((req, res, next) => {
    // Cookies ignore ports: keep the browser on the one host name the redirect URIs name, or the
    // session cookie set before the redirect would be missing after it.
    if (req.get('host') !== own.host) {
      return res.redirect(own.origin + (req.originalUrl.startsWith('/') ? req.originalUrl : '/'));
    }
    res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Frame-Options': 'DENY' });
    next();
  });

  app.get('/', async (req, res) => {
    const { tokens } = sessionOf(req, res, sessions);
    res.type('html').send(page('Demo client', tokens ? await signedIn(tokens) : signedOut()));
  });

  // Starts the authorization code grant: state against CSRF, PKCE (RFC 7636) against code theft.
  app.get('/login', async (req, res) => {
    const session = sessionOf(req, res, sessions);
    const state = randomBytes(16).toString('base64url');
    const codeVerifier = randomBytes(32).toString('base64url');
    session.pending = { state, codeVerifier };
    const url = new URL((await endpoints()).authorization);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: options.codeClient.clientId,
      redirect_uri: callbackUri,
      state,
      code_challenge: createHash('sha256').update(codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
      // Skips the provider selection page when the user picked a provider here.
      ...(typeof req.query.op === 'string' ? { opIdentifier: req.query.op } : {}),
    }).toString();
    res.redirect(url.href);
  });

  app.get('/callback', async (req, res) => {
    const session = sessionOf(req, res, sessions);
    const { pending } = session;
    delete session.pending;
    const query = req.query as Record<string, unknown>;
    if (!pending || query.state !== pending.state) {
      throw new Error('The state does not match a login started here. Start again from the home page.');
    }
    if (typeof query.error === 'string') {
      throw new Error(
        `The authorization server answered ${query.error}: ${String(query.error_description ?? '')}`,
      );
    }
    if (typeof query.code !== 'string') throw new Error('The callback carries no code.');
    session.tokens = await tokenRequest({
      grant_type: 'authorization_code',
      code: query.code,
      redirect_uri: callbackUri,
      code_verifier: pending.codeVerifier,
    });
    // Redirect so the code leaves the address bar and a reload does not send it twice.
    res.redirect(303, '/');
  });

  // The refresh token gets a new access token without the user (the spec's rule 4).
  app.post('/refresh', async (req, res) => {
    const session = sessionOf(req, res, sessions);
    if (!session.tokens) return res.redirect(303, '/');
    session.tokens = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: session.tokens.refreshToken,
      redirect_uri: callbackUri,
    });
    res.redirect(303, '/');
  });

  app.post('/forget', (req, res) => {
    delete sessionOf(req, res, sessions).tokens;
    res.redirect(303, '/');
  });

  app.get('/implicit', async (_req, res) => {
    const nonce = randomBytes(16).toString('base64');
    const serverOrigin = new URL(options.serverUrl).origin;
    res.set(
      'Content-Security-Policy',
      `default-src 'none'; script-src 'nonce-${nonce}'; connect-src ${serverOrigin}; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'`,
    );
    const config = {
      authorization: (await endpoints()).authorization,
      clientId: options.implicitClient.clientId,
      redirectUri: implicitUri,
      realmsUrl,
    };
    res.type('html').send(page('Implicit flow', implicitPage(config), implicitScript(nonce)));
  });

  const errors: ErrorRequestHandler = (err: unknown, _req, res, _next) => {
    const message = err instanceof Error ? err.message : String(err);
    res
      .status(400)
      .type('html')
      .send(
        page(
          'Error',
          html`<h1>Something went wrong</h1>
            <p class="error">${message}</p>
            <p><a href="/">Back</a></p>`,
        ),
      );
  };
  app.use(errors);
  return app;

  /** The token endpoint, authenticating with client_secret in the form body (the spec's way). */
  async function tokenRequest(params: Record<string, string>): Promise<NonNullable<ClientSession['tokens']>> {
    const body = new URLSearchParams({
      ...params,
      client_id: options.codeClient.clientId,
      client_secret: options.codeClient.clientSecret,
    });
    const res = await fetch((await endpoints()).token, {
      method: 'POST',
      body,
      signal: AbortSignal.timeout(5000),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok || typeof json.access_token !== 'string' || typeof json.refresh_token !== 'string') {
      throw new Error(
        `The token endpoint answered ${res.status}: ${String(json.error)}: ${String(json.error_description)}`,
      );
    }
    return {
      accessToken: json.access_token,
      refreshToken: json.refresh_token,
      expiresAt: Date.now() + Number(json.expires_in) * 1000,
    };
  }

  async function signedIn(tokens: NonNullable<ClientSession['tokens']>): Promise<Markup> {
    const res = await fetch(realmsUrl, {
      headers: { authorization: `Bearer ${tokens.accessToken}` },
      signal: AbortSignal.timeout(5000),
    });
    const seconds = Math.round((tokens.expiresAt - Date.now()) / 1000);
    const result = res.ok
      ? realmsList((await res.json()) as RealmsResponse)
      : html`<p class="error">
          GET /v1/realms answered ${res.status}: <code>${res.headers.get('www-authenticate')}</code>. Try a
          refresh.
        </p>`;
    return html`<h1>Your realms</h1>
      ${result}
      <p class="muted">
        Access token <code>${tokens.accessToken.slice(0, 8)}…</code>,
        ${seconds > 0 ? `expires in ${seconds} s` : 'expired'}. Refresh token
        <code>${tokens.refreshToken.slice(0, 8)}…</code>, kept by this server, never given to the browser.
      </p>
      <form method="post" action="/refresh"><button>Refresh the access token</button></form>
      <form method="post" action="/forget"><button>Forget the tokens</button></form>
      <p class="muted">
        You can end this application's access at any time on the server's
        <a href="${authorizedApplicationsUrl}">authorized applications</a> page.
      </p>`;
  }

  function signedOut(): Markup {
    const direct = options.providers.map(
      (p) =>
        html`<a class="button" href="/login?${new URLSearchParams({ op: p.identifier }).toString()}"
          >Log in with ${p.name}</a
        >`,
    );
    return html`<h1>Demo client</h1>
      <p>
        This application lists your realms at the authorization server's API. It never sees your credentials:
        you log in at an OpenID provider, and it receives an access token.
      </p>
      <p><a class="button" href="/login">Log in (authorization code)</a> ${direct}</p>
      <p class="muted">
        The first button shows the provider selection page; the others pass <code>opIdentifier</code> to skip
        it. <a href="/implicit">The implicit flow</a> runs in the browser instead.
      </p>`;
  }
}

interface RealmsResponse {
  owner: string | null;
  realms: { id: string; name: string }[];
}

function realmsList(body: RealmsResponse): Markup {
  return html`<p>Signed in as <code>${body.owner}</code>.</p>
    <ul>
      ${body.realms.map((r) => html`<li>${r.name} <span class="muted">${r.id}</span></li>`)}
    </ul>`;
}

/** The browser's session with this app, created on first visit. */
function sessionOf(req: Request, res: Response, sessions: Map<string, ClientSession>): ClientSession {
  const sid = /(?:^|;\s*)demo_client_sid=([\w-]{22})(?:;|$)/.exec(req.get('cookie') ?? '')?.[1];
  const existing = sid === undefined ? undefined : sessions.get(sid);
  if (existing) return existing;
  const fresh: ClientSession = {};
  const id = randomBytes(16).toString('base64url');
  sessions.set(id, fresh);
  // Lax: sent on the top-level redirect back from the server, not on cross-site form posts.
  res.cookie(COOKIE, id, { httpOnly: true, sameSite: 'lax', path: '/' });
  return fresh;
}

/** The endpoint URLs, read once from the server's root resource, as the spec has clients do. */
function discovery(serverUrl: string): () => Promise<{ authorization: string; token: string }> {
  let cached: Promise<{ authorization: string; token: string }> | undefined;
  const load = async () => {
    const res = await fetch(new URL('./', `${serverUrl.replace(/\/+$/, '')}/`), {
      signal: AbortSignal.timeout(5000),
    });
    const root = (await res.json()) as {
      oauth?: { authorization?: { href?: string }; token?: { href?: string } };
    };
    const authorization = root.oauth?.authorization?.href;
    const token = root.oauth?.token?.href;
    if (!res.ok || !authorization || !token)
      throw new Error(`The root resource of ${serverUrl} names no OAuth endpoints.`);
    return { authorization, token };
  };
  return () => {
    if (!cached) {
      cached = load();
      // Forget a failure, so that a server reachable later is found on the next request.
      cached.catch(() => (cached = undefined));
    }
    return cached;
  };
}
