/**
 * Issue 42 in the demo: `ACCESS_TOKEN_FORMAT=jwt` makes it issue JWT access tokens (RFC 9068) for
 * both resources it declares: `typ: at+jwt`, an asymmetric algorithm, `exp` at most a day after
 * `iat`, `aud` the resource. openid-client 6 gets them unchanged; they verify with jose against
 * the `jwks_uri` and nothing else, at their own resource only; the CLI rotates the demo's keys
 * with the demo's `OIDC_KEY_SECRET` and the token keeps verifying; the demo's own resources refuse
 * a JWT whose grant was revoked or whose client was removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startDemo, type RunningDemo } from '../support/demo-process.js';

const dir = mkdtempSync(join(tmpdir(), 'oob-demo-jwt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY_SECRET = 'the demo test key secret, 32 characters or more';

describe('the demo with ACCESS_TOKEN_FORMAT=jwt', () => {
  const databaseUrl = `sqlite:${join(dir, 'demo.db')}`;
  let demo: RunningDemo;
  let origin: string;
  let config: client.Configuration;
  let jwksUri: string;

  const cli = async (...args: string[]) => {
    const result = await runCli(['--database-url', databaseUrl, ...args], { OIDC_KEY_SECRET: KEY_SECRET });
    expect(result.code, result.stderr).toBe(0);
    return result.stdout;
  };

  beforeAll(async () => {
    const added = await cli(
      '--json',
      'clients',
      'add',
      '--migrate',
      '--name',
      'Stats crawler',
      '--grant',
      'client_credentials',
      '--client-id',
      'stats-bot',
      '--scope',
      'realms:read',
    );
    const bot = JSON.parse(added) as { client_id: string; client_secret: string };
    demo = await startDemo({
      DATABASE_URL: databaseUrl,
      ACCESS_TOKEN_FORMAT: 'jwt',
      OIDC_KEY_SECRET: KEY_SECRET,
    });
    origin = `http://127.0.0.1:${new URL(demo.serverUrl).port}`;
    config = await client.discovery(
      new URL(demo.serverUrl),
      bot.client_id,
      undefined,
      client.ClientSecretBasic(bot.client_secret),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
    );
    jwksUri = config.serverMetadata().jwks_uri!;
  }, 90_000);
  afterAll(() => demo?.stop());

  const tokenFor = async (resource?: string) =>
    (await client.clientCredentialsGrant(config, { scope: 'realms:read', ...(resource ? { resource } : {}) }))
      .access_token;

  /** Verifies as a resource server elsewhere: jose, the JWKS, the issuer and the audience. */
  const verify = (token: string, audience: string) =>
    jwtVerify(token, createRemoteJWKSet(new URL(jwksUri)), {
      typ: 'at+jwt',
      issuer: demo.serverUrl,
      audience,
    });

  const realms = async (token: string) =>
    (await fetch(`${origin}/v1/realms`, { headers: { authorization: `Bearer ${token}` } })).status;

  it('says so in its banner', () => {
    expect(demo.output()).toContain('Access tokens: JWT (ACCESS_TOKEN_FORMAT, RFC 9068), living 15 minutes');
  });

  it('issues, through openid-client 6 unchanged, a JWT access token that jose verifies with the JWKS alone', async () => {
    const token = await tokenFor();
    const header = decodeProtectedHeader(token);
    expect(header.typ).toBe('at+jwt');
    expect(['RS256', 'ES256']).toContain(header.alg);
    const { payload } = await verify(token, demo.serverUrl);
    expect(payload).toMatchObject({ aud: demo.serverUrl, sub: 'stats-bot', client_id: 'stats-bot' });
    expect(payload.exp! - payload.iat!).toBeGreaterThan(0);
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(86_400);
    expect(await realms(token)).toBe(200);
    // Introspection, through openid-client, answers for it too.
    expect(await client.tokenIntrospection(config, token)).toMatchObject({
      active: true,
      aud: demo.serverUrl,
    });
  });

  it('a token for the MCP server is a JWT of that audience, refused at the API', async () => {
    const mcp = `${demo.serverUrl}/mcp`;
    const token = await tokenFor(mcp);
    expect(decodeJwt(token).aud).toBe(mcp);
    await verify(token, mcp);
    await expect(verify(token, demo.serverUrl)).rejects.toThrow(/aud/);
    expect(await realms(token)).toBe(401);
  });

  it("the CLI's keys rotate works on the demo's keys (OIDC_KEY_SECRET), and the token keeps verifying", async () => {
    const token = await tokenFor();
    const before = (JSON.parse(await cli('--json', 'keys', 'list')) as { kid: string }[]).length;
    await cli('keys', 'rotate');
    const keys = JSON.parse(await cli('--json', 'keys', 'list')) as { kid: string; state: string }[];
    expect(keys.length).toBe(before + 1);
    expect(keys.map((key) => key.kid)).toContain(decodeProtectedHeader(token).kid);
    await verify(token, demo.serverUrl);
    expect(await realms(token)).toBe(200);
  });

  it("the demo's resources refuse a JWT whose grant was revoked, or whose client was removed", async () => {
    const token = await tokenFor();
    expect(await realms(token)).toBe(200);
    await cli('grants', 'revoke', '--user', 'client:stats-bot', '--client', 'stats-bot');
    expect(await realms(token)).toBe(401);
    // Its signature still holds: a resource server elsewhere takes it until exp (the caveat).
    await verify(token, demo.serverUrl);

    const again = await tokenFor();
    expect(await realms(again)).toBe(200);
    await cli('clients', 'remove', 'stats-bot');
    expect(await realms(again)).toBe(401);
  });
});
