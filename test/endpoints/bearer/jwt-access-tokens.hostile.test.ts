/**
 * Hostile JWT access tokens at requireBearer: `alg: none`, HS256 signed with the public key,
 * another issuer, expired, another `typ` (an ID token), another audience, a key no longer
 * published. Each forged token is given a stored record of its own, as if it had been issued, so
 * that only the check of its signature and claims stands between it and the route; a token signed
 * the same way with the right claims passes, so the harness can let a token through.
 */
import { createPublicKey } from 'node:crypto';
import express from 'express';
import supertest from 'supertest';
import { decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createAuthorizationServer,
  memoryStorage,
  registerClient,
  requireBearer,
  type AuthorizationServer,
  type Storage,
} from '../../../src/index.js';
import { recordConsent, saveAccessToken } from '../../../src/grants/index.js';
import { hashSecret } from '../../../src/crypto/secrets.js';
import type { TokenRecord } from '../../../src/storage/types.js';

const API = 'https://api.example.com/';
const MCP = 'https://api.example.com/mcp';
const ISSUER = 'https://auth.example.com';

let storage: Storage;
let signingKey: JWK;
let legit: { token: string; record: TokenRecord };

/** A server on `storage` whose signing keys are the host's `keys`, with a route for each resource. */
function serverWith(keys: JWK[]) {
  const server = createAuthorizationServer({
    baseUrl: ISSUER,
    storage,
    providers: [{ name: 'Example', identifier: 'https://id.example.com/' }],
    session: { secret: 'x'.repeat(32) },
    oidc: { keys },
    resources: [
      { resource: API, default: true, accessTokenFormat: 'jwt' },
      { resource: MCP, accessTokenFormat: 'jwt' },
    ],
  });
  const app = express();
  app.get('/v1/realms', requireBearer(server), (_req, res) => void res.json({ ok: true }));
  return { server, app };
}

async function privateKey(kid: string): Promise<JWK> {
  const pair = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(pair.privateKey)), kid, alg: 'RS256' };
}

let server: AuthorizationServer;
let app: express.Express;

beforeAll(async () => {
  storage = memoryStorage();
  signingKey = await privateKey('host-key-1');
  ({ server, app } = serverWith([signingKey]));
  await registerClient(storage, {
    clientId: 'c1',
    applicationName: 'Client one',
    redirectUri: 'https://client.example/cb',
    scopes: ['realms'],
  });
  const { grant } = await recordConsent(server, 'u1', 'c1', ['realms']);
  const subject = {
    clientId: 'c1',
    userId: 'u1',
    scopes: ['realms'],
    grantId: grant.grantId,
    resources: [API],
  };
  legit = await saveAccessToken(server, subject, 'authorization_code', server.clock());
});

/** The legitimate token's claims, changed by `change`. */
function claims(change: Record<string, unknown> = {}) {
  return { ...decodeJwt(legit.token), ...change };
}

/** Signs `payload` with `key` (default: the server's own), under `header`. */
async function signed(
  payload: Record<string, unknown>,
  header: Record<string, unknown> = {},
  key = signingKey,
) {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'RS256', kid: signingKey.kid!, typ: 'at+jwt', ...header })
    .sign(await importJWK(key, 'RS256'));
}

/** Presents `token` at the realms API after saving a record for it, as if it had been issued. */
async function present(token: string, at = app) {
  await storage.tokens.save({ ...legit.record, tokenHash: hashSecret(token) });
  return supertest(at).get('/v1/realms').set('Authorization', `Bearer ${token}`);
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('requireBearer refuses a hostile JWT access token, even one with a record', () => {
  it('passes the issued token, and one signed the same way with the right claims (the harness lets through)', async () => {
    expect(
      (await supertest(app).get('/v1/realms').set('Authorization', `Bearer ${legit.token}`)).status,
    ).toBe(200);
    expect((await present(await signed(claims({ jti: 'another-jti' })))).status).toBe(200);
  });

  it('alg: none', async () => {
    const token = `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims())}.`;
    const res = await present(token);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('HS256 signed with the public key (algorithm confusion)', async () => {
    const publicPem = createPublicKey({ key: signingKey as never, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    const publicJwk = (await server.oidc!.keys.current()).published[0];
    for (const secret of [Buffer.from(publicPem), Buffer.from(JSON.stringify(publicJwk))]) {
      const token = await new SignJWT(claims())
        .setProtectedHeader({ alg: 'HS256', kid: signingKey.kid!, typ: 'at+jwt' })
        .sign(new Uint8Array(secret));
      expect((await present(token)).status).toBe(401);
    }
  });

  it('another issuer, though signed with the right key', async () => {
    expect((await present(await signed(claims({ iss: 'https://evil.example' })))).status).toBe(401);
  });

  it('expired, though its record has not', async () => {
    const past = Math.floor(Date.now() / 1000) - 60;
    expect((await present(await signed(claims({ exp: past, iat: past - 60 })))).status).toBe(401);
  });

  it('another typ: an ID token of this server is not an access token', async () => {
    expect(await present(await signed(claims(), { typ: 'JWT' }))).toMatchObject({ status: 401 });
    expect(await present(await signed(claims(), { typ: undefined }))).toMatchObject({ status: 401 });
  });

  it('another audience, at this resource', async () => {
    expect(await present(await signed(claims({ aud: MCP })))).toMatchObject({ status: 401 });
  });

  it('missing claims RFC 9068 requires (client_id, jti)', async () => {
    for (const claim of ['client_id', 'jti']) {
      const without = claims();
      delete without[claim];
      expect((await present(await signed(without))).status).toBe(401);
    }
  });

  it('signed by a key the server no longer publishes (retired by the host), or by a stranger with its kid', async () => {
    const next = await privateKey('host-key-2');
    const rotated = serverWith([next]);
    const res = await supertest(rotated.app).get('/v1/realms').set('Authorization', `Bearer ${legit.token}`);
    expect(res.status).toBe(401);
    // Still fine where the key is published: only the key is what changed.
    const both = serverWith([next, signingKey]);
    expect(
      (await supertest(both.app).get('/v1/realms').set('Authorization', `Bearer ${legit.token}`)).status,
    ).toBe(200);

    const stranger = await privateKey(signingKey.kid!);
    expect((await present(await signed(claims(), {}, stranger))).status).toBe(401);
  });
});
