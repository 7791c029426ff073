/**
 * Peer contender: oidc-provider 9 (panva/node-oidc-provider, a certified OpenID Provider and OAuth
 * 2.0 authorization server on Koa), mounted in Express 5 with `provider.callback()`, configured
 * the way its documentation shows for a plain OAuth 2.0 API (not OpenID Connect: no `openid`
 * scope, so no ID token):
 *
 *   - `GET  /oauth/authorize`  the provider's authorization endpoint; its own session cookie
 *                              (`_session`, signed) and the user's stored Grant. A user who already
 *                              granted the scope is redirected at once (303, not 302).
 *   - `POST /oauth/token`      `client_secret_basic`, the `authorization_code` and `refresh_token`
 *                              grants; refresh tokens issued for the code grant, not rotated.
 *   - `GET  /v1/realms`        the app's route: `provider.AccessToken.find(token)` (the provider's
 *                              own lookup, expiry included), then the audience and `realms:read`.
 *   - `/interaction/:uid`      contender-only: the login and consent steps finished at once for
 *                              USER (`interactionFinished`), the stand-in for a login form and a
 *                              consent page, used once before the load.
 *
 * Access tokens are opaque and bound to one resource server (resource indicators, the
 * provider's way to issue tokens for an API). Storage is an adapter over a Map (the provider's
 * own memory adapter is an LRU of 1,000 entries, which would evict the seeded tokens), nothing
 * hashed; seeded tokens and codes are the provider's own models, saved with the fixtures'
 * values as their ids.
 */
import { generateKeyPairSync } from 'node:crypto';
import express from 'express';
import Provider from 'oidc-provider';
import { codeCount, listen, ready, tokenCount, workload } from '../lib/contender.mjs';
import {
  ACCESS_TOKEN,
  authorizeQuery,
  CLIENT_ID,
  CLIENT_SECRET,
  codeFor,
  fillerTokenFor,
  REALMS,
  REDIRECT_URI,
  REFRESH_TOKEN,
  SCOPE,
  USER,
} from '../lib/fixtures.mjs';

const API = 'https://api.bench.example/';
/**
 * BENCH_OIDC=RS256|ES256 (`oidc-provider-oidc-rs256`, …): OpenID Connect on, every code granting
 * `openid`, so each exchange signs an ID token with a key of that algorithm, as the library's
 * `library-memory-oidc-*` rows do.
 */
const OIDC = process.env.BENCH_OIDC;
const SCOPES = OIDC ? `openid ${SCOPE}` : SCOPE;
const signingKey = () => {
  const { privateKey } =
    OIDC === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), alg: OIDC, use: 'sig', kid: 'bench' };
};
const epoch = () => Math.floor(Date.now() / 1000);

/** One Map for every model, with the grant index that revocation by grant needs. */
const store = new Map();
const grants = new Map();
class MapAdapter {
  constructor(model) {
    this.model = model;
  }
  key(id) {
    return `${this.model}:${id}`;
  }
  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    store.set(key, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
    if (payload.grantId) {
      const members =
        grants.get(payload.grantId) ?? grants.set(payload.grantId, new Set()).get(payload.grantId);
      members.add(key);
    }
    if (this.model === 'Session')
      store.set(`sessionUid:${payload.uid}`, { payload: id, expiresAt: Infinity });
  }
  async find(id) {
    const entry = store.get(this.key(id));
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      store.delete(this.key(id));
      return undefined;
    }
    return entry.payload;
  }
  async findByUid(uid) {
    const id = store.get(`sessionUid:${uid}`)?.payload;
    return id === undefined ? undefined : this.find(id);
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(id) {
    const entry = store.get(this.key(id));
    if (entry) entry.payload.consumed = epoch();
  }
  async destroy(id) {
    store.delete(this.key(id));
  }
  async revokeByGrantId(grantId) {
    for (const key of grants.get(grantId) ?? []) store.delete(key);
    grants.delete(grantId);
  }
}

const provider = new Provider('http://127.0.0.1', {
  adapter: MapAdapter,
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      ...(OIDC ? { id_token_signed_response_alg: OIDC } : {}),
    },
  ],
  ...(OIDC ? { jwks: { keys: [signingKey()] } } : {}),
  scopes: OIDC ? ['openid', SCOPE] : [SCOPE],
  routes: { authorization: '/oauth/authorize', token: '/oauth/token' },
  cookies: { keys: ['bench-cookie-key-0123456789abcdefghijklmnopqrstuvwxyz'] },
  findAccount: async (_ctx, accountId) => ({ accountId, claims: async () => ({ sub: accountId }) }),
  features: {
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => API,
      useGrantedResource: async () => true,
      getResourceServerInfo: async () => ({
        scope: SCOPE,
        accessTokenFormat: 'opaque',
        accessTokenTTL: 3600,
      }),
    },
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: false,
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 6 * 3600,
    RefreshToken: 14 * 24 * 3600,
    Grant: 14 * 24 * 3600,
    Session: 14 * 24 * 3600,
    Interaction: 3600,
  },
});
provider.proxy = false;

// ---- Seeding: the provider's own models ------------------------------------------------------------

const client = await provider.Client.find(CLIENT_ID);
const grant = new provider.Grant({ accountId: USER, clientId: CLIENT_ID });
grant.addOIDCScope(SCOPES);
grant.addResourceScope(API, SCOPE);
const grantId = await grant.save();
const resourceServer = { identifier: () => API, audience: API, scope: SCOPE, accessTokenFormat: 'opaque' };
/** A model saved with a given id: the format is set where the provider would have made the id. */
const withId = (model) => Object.assign(model, { format: 'opaque' }).save();
const accessToken = (jti) =>
  withId(
    new provider.AccessToken({
      jti,
      accountId: USER,
      client,
      grantId,
      scope: SCOPE,
      resourceServer,
      gty: 'authorization_code',
      expiresIn: 6 * 3600,
    }),
  );
await accessToken(ACCESS_TOKEN);
for (let i = 0; i < tokenCount; i++) await accessToken(fillerTokenFor(i));
await withId(
  new provider.RefreshToken({
    jti: REFRESH_TOKEN,
    accountId: USER,
    client,
    grantId,
    scope: SCOPE,
    resource: API,
    gty: 'authorization_code',
  }),
);
for (let i = 0; i < codeCount; i++) {
  await withId(
    new provider.AuthorizationCode({
      jti: codeFor(i),
      accountId: USER,
      client,
      grantId,
      scope: SCOPES,
      resource: API,
      redirectUri: REDIRECT_URI,
      ...(OIDC ? { authTime: epoch() } : {}),
      expiresIn: 6 * 3600,
    }),
  );
}

// ---- Express -----------------------------------------------------------------------------------

const app = express();
app.disable('x-powered-by');

app.get('/v1/realms', async (req, res, next) => {
  try {
    const header = req.headers.authorization ?? '';
    const value = header.startsWith('Bearer ') ? header.slice(7) : undefined;
    const token = value && (await provider.AccessToken.find(value));
    if (!token || token.aud !== API || !token.scopes.has(SCOPE)) {
      return res.status(401).set('WWW-Authenticate', 'Bearer error="invalid_token"').end();
    }
    res.json(REALMS);
  } catch (err) {
    next(err);
  }
});

// Contender-only: login and consent finished at once for USER, as a login form and a consent
// page would after the user's answers.
app.get('/interaction/:uid', async (req, res, next) => {
  try {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      return await provider.interactionFinished(req, res, { login: { accountId: USER } });
    }
    // The consent page's "allow", as oidc-provider's documentation writes it: the missing scopes
    // added to the user's grant for the client.
    const consent = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: USER, clientId: CLIENT_ID });
    const missing = details.prompt.details;
    if (missing.missingOIDCScope) consent.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      consent.addResourceScope(indicator, scopes.join(' '));
    }
    const consentGrantId = await consent.save();
    await provider.interactionFinished(req, res, { consent: { grantId: consentGrantId } });
  } catch (err) {
    next(err);
  }
});

app.use(provider.callback());

const { server: httpServer, url } = await listen(app);

/** What a browser does once: authorize, log in, consent; resolves the provider's cookies. */
async function logInAndConsent() {
  const jar = new Map();
  const get = async (target) => {
    const res = await fetch(new URL(target, url), {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const at = pair.indexOf('=');
      const [name, value] = [pair.slice(0, at), pair.slice(at + 1)];
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(set)) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  };
  let res = await get(`/oauth/authorize?${authorizeQuery}`);
  for (let step = 0; step < 10 && res.status >= 300 && res.status < 400; step++) {
    const location = res.headers.get('location');
    if (location.startsWith(REDIRECT_URI)) break;
    res = await get(location);
  }
  const location = res.headers.get('location') ?? '';
  if (!location.startsWith(`${REDIRECT_URI}?code=`)) {
    throw new Error(`oidc-provider login: ended with ${res.status} ${location} ${await res.text()}`);
  }
  // Only the session's cookies (they are path=/); the interaction's are spent.
  return [...jar]
    .filter(([name]) => name.startsWith('_session'))
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');
}

const headers = workload === 'authorize' ? { cookie: await logInAndConsent() } : {};
ready(httpServer, headers);
