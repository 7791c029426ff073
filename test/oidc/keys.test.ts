/**
 * OpenID Connect signing keys: made on first use, sealed at rest, published before they sign and
 * until retired, rotated and retired from the CLI, seen by every instance within a minute; and
 * the discovery document that announces them. On SQLite, and on PostgreSQL when it is there (two
 * instances sharing one database).
 */
import { generateKeyPair, exportJWK, compactVerify, SignJWT, importJWK, type JWK } from 'jose';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import supertest from 'supertest';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import {
  connectStorage,
  createAuthorizationServer,
  discoveryRouter,
  memoryStorage,
  oauthRouter,
  type AuthorizationServerOptions,
  type Storage,
} from '../../src/index.js';
import { KEY_REFRESH_MS, KEY_STALE_LIMIT_MS, keyRing, rotateKeys } from '../../src/oidc/keys.js';
import { dropSchema, postgresAvailability, postgresUrlFor, uniqueSchema } from '../support/databases.js';

const KEY_SECRET = 'a-key-secret-of-at-least-32-characters!!';
const dir = mkdtempSync(join(tmpdir(), 'oob-oidc-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A server on `storage` with OIDC on, its clock settable, behind a real Express app. */
function serverOn(storage: Storage, oidc: AuthorizationServerOptions['oidc'] = { keySecret: KEY_SECRET }) {
  let now = Date.now();
  const server = createAuthorizationServer({
    baseUrl: 'https://auth.example',
    storage,
    providers: [{ name: 'Example ID', identifier: 'https://id.example/' }],
    session: { secret: 'a-session-secret-of-at-least-32-chars!!' },
    clock: () => now,
    oidc,
  });
  const app = express().use(oauthRouter(server));
  return {
    server,
    agent: supertest(app),
    advance(ms: number) {
      now += ms;
    },
    async jwks(): Promise<JWK[]> {
      const res = await supertest(app).get('/oauth/jwks').expect(200);
      return res.body.keys as JWK[];
    },
    async signer(): Promise<string> {
      return (await server.oidc!.keys.current()).signer.kid;
    },
  };
}

/** Runs the CLI on `url`; resolves what it printed (JSON) or its error. */
async function cli(url: string, env: NodeJS.ProcessEnv, ...args: string[]) {
  let out = '';
  const program = createProgram({ out: (text) => (out += text), err: () => undefined }, env);
  const error = await program
    .parseAsync(['node', 'openid-oauth-bridge', '--database-url', url, '--json', ...args])
    .then(
      () => null,
      (err: Error) => err.message,
    );
  return {
    keys: error === null ? (JSON.parse(out) as { kid: string; state: string; signs: boolean }[]) : [],
    error,
  };
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

describe('signing keys', () => {
  it('the first use makes one active key and one next key, both published, public parts only', async () => {
    const storage = memoryStorage();
    const t = serverOn(storage);
    const keys = await t.jwks();
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String) });
      for (const member of PRIVATE_MEMBERS) expect(key).not.toHaveProperty(member);
    }
    expect(new Set(keys.map((key) => key.kid)).size).toBe(2);
    const stored = await storage.keys.list();
    expect(stored.map((key) => key.state).sort()).toEqual(['active', 'next']);
    expect(keys.map((key) => key.kid)).toContain(await t.signer());
    // At rest, the private key is a compact JWE (five parts), not a JWK.
    for (const key of stored) {
      expect(key.sealedPrivateJwk.split('.')).toHaveLength(5);
      expect(key.sealedPrivateJwk).not.toMatch(/"d"/);
    }
  });

  it('the JWKS is cacheable, readable from any origin, and refuses other methods', async () => {
    const t = serverOn(memoryStorage());
    const res = await t.agent.get('/oauth/jwks').expect(200);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers.pragma).toBeUndefined();
    const post = await t.agent.post('/oauth/jwks');
    expect(post.status).toBe(400);
    expect(post.body.error).toBe('invalid_request');
  });

  it('a server with another keySecret cannot open the keys: 500 with no detail, the keys untouched', async () => {
    const storage = memoryStorage();
    await serverOn(storage).jwks();
    // No next key (a rotation cut short): the server would make one, but not with a wrong secret.
    const next = (await storage.keys.list()).find((key) => key.state === 'next')!;
    await storage.keys.save({ ...next, state: 'retired', retiredAt: Date.now() });
    const before = await storage.keys.list();
    const errors: unknown[] = [];
    const other = createAuthorizationServer({
      baseUrl: 'https://auth.example',
      storage,
      providers: [{ name: 'Example ID', identifier: 'https://id.example/' }],
      session: { secret: 'a-session-secret-of-at-least-32-chars!!' },
      oidc: { keySecret: 'another-secret-of-at-least-32-characters' },
      logger: { warn: () => undefined, error: (message) => errors.push(message) },
    });
    const res = await supertest(express().use(oauthRouter(other))).get('/oauth/jwks');
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toMatch(/keySecret|sealed/);
    expect(await storage.keys.list()).toEqual(before);
  });

  it('a wrong keySecret is told once in the log, naming the option, and answered server_error saying why (was: an unexplained 500)', async () => {
    const storage = memoryStorage();
    await serverOn(storage).jwks();
    const logged: string[] = [];
    const other = createAuthorizationServer({
      baseUrl: 'https://auth.example',
      storage,
      providers: [{ name: 'Example ID', identifier: 'https://id.example/' }],
      session: { secret: 'a-session-secret-of-at-least-32-chars!!' },
      oidc: { keySecret: 'another-secret-of-at-least-32-characters' },
      logger: { warn: () => undefined, error: (message) => logged.push(message) },
    });
    const agent = supertest(express().use(oauthRouter(other)));
    for (let i = 0; i < 2; i++) {
      const res = await agent.get('/oauth/jwks');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        error: 'server_error',
        error_description:
          'The server cannot sign ID tokens or publish its keys: its signing keys do not open with its configuration. Its operator is told in the server log.',
      });
    }
    // An ID token (the code exchange with openid) reads the keys the same way.
    await expect(other.oidc!.keys.current()).rejects.toMatchObject({ code: 'server_error' });
    const named = logged.filter((message) => message.includes('oidc.keySecret'));
    expect(named).toEqual([
      expect.stringMatching(
        /^oidc\.keySecret does not open the stored signing key \S+: give this instance the oidc\.keySecret the keys were sealed with/,
      ),
    ]);
  });

  it('instances starting at once on one storage make one pair of keys between them', async () => {
    const storage = memoryStorage();
    const servers = Array.from({ length: 5 }, () => serverOn(storage));
    const signers = await Promise.all(servers.map((t) => t.signer()));
    expect(new Set(signers).size).toBe(1);
    expect((await storage.keys.list()).map((key) => key.state).sort()).toEqual(['active', 'next']);
  });

  it('host keys: the first signs, every one is published without its private part; nothing is stored', async () => {
    const rsa = await generateKeyPair('RS256', { extractable: true });
    const ec = await generateKeyPair('ES256', { extractable: true });
    const keys = [
      { ...(await exportJWK(ec.privateKey)), kid: 'ec-1', alg: 'ES256' },
      { ...(await exportJWK(rsa.privateKey)), kid: 'rsa-1', alg: 'RS256' },
    ];
    const storage = memoryStorage();
    const t = serverOn(storage, { keys });
    const published = await t.jwks();
    expect(published.map((key) => key.kid)).toEqual(['ec-1', 'rsa-1']);
    for (const key of published) for (const member of PRIVATE_MEMBERS) expect(key).not.toHaveProperty(member);
    expect(await t.signer()).toBe('ec-1');
    expect(await storage.keys.list()).toEqual([]);
    const doc = (await t.agent.get('/.well-known/openid-configuration').expect(200)).body;
    expect(doc.id_token_signing_alg_values_supported).toEqual(['ES256', 'RS256']);
  });

  it('host keys without an RS256 key are refused when the server is built, saying what to add (Discovery 1.0 section 3)', async () => {
    const ec = await generateKeyPair('ES256', { extractable: true });
    const keys = [{ ...(await exportJWK(ec.privateKey)), kid: 'ec-1', alg: 'ES256' }];
    expect(() => serverOn(memoryStorage(), { keys })).toThrow(
      /oidc\.keys: needs an RS256 key \(a private RSA JWK of 2048 bits or more, with a kid and alg RS256\): OpenID Connect Discovery 1\.0 section 3 requires RS256, .*add one, first in the list to sign with it, or use keySecret/,
    );
  });

  it.each([
    [{ keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'h', alg: 'HS256' }] }, /oidc\.keys\.0.*asymmetric/],
    [{ keys: [{ kty: 'RSA', n: 'AQAB', e: 'AQAB', kid: 'pub', alg: 'RS256' }] }, /oidc\.keys\.0.*private/],
    [{ keySecret: 'short' }, /oidc\.keySecret/],
    [
      { keys: [{ kty: 'RSA', n: 'A'.repeat(171), e: 'AQAB', d: 'x', kid: 'small', alg: 'RS256' }] },
      /2048 bits/,
    ],
    [{}, /oidc\.keySecret/],
    [{ keySecret: KEY_SECRET, keys: [] }, /oidc\.keys|oidc\.keySecret/],
  ])('options %j are refused when the server is built', (oidc, message) => {
    expect(() => serverOn(memoryStorage(), oidc as AuthorizationServerOptions['oidc'])).toThrow(message);
  });

  it('two host keys with one kid are refused', async () => {
    const key = {
      ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey)),
      alg: 'ES256',
    };
    expect(() =>
      serverOn(memoryStorage(), {
        keys: [
          { ...key, kid: 'same' },
          { ...key, kid: 'same' },
        ],
      }),
    ).toThrow(/each key needs its own kid/);
  });

  it('the key secret never appears in an options error, misspelled or not', () => {
    const secret = 'TOPSECRET-0123456789-0123456789-0123';
    for (const oidc of [
      { keySecret: secret, keys: [] },
      { keysecret: secret },
      { keySecret: secret.slice(0, 10) },
    ]) {
      expect(() => serverOn(memoryStorage(), oidc as never)).toThrow(/oidc/);
      try {
        serverOn(memoryStorage(), oidc as never);
      } catch (err) {
        expect((err as Error).message).not.toContain('TOPSECRET');
      }
    }
  });

  it('keys that cannot be read again are used for at most five minutes, each failure told', async () => {
    const storage = memoryStorage();
    let now = Date.now();
    const told: unknown[] = [];
    const ring = keyRing(
      { kind: 'stored', store: storage.keys, keySecret: KEY_SECRET, algorithm: 'RS256' },
      storage,
      () => now,
      (err) => told.push(err),
    );
    const { signer } = await ring.current();
    storage.keys.list = () => Promise.reject(new Error('the database is down'));
    now += KEY_REFRESH_MS;
    expect((await ring.current()).signer.kid).toBe(signer.kid);
    expect(told).toHaveLength(1);
    now += KEY_STALE_LIMIT_MS;
    await expect(ring.current()).rejects.toThrow('the database is down');
  });

  it('keys rotate keeps the algorithm of the key that signs unless told otherwise', async () => {
    const storage = memoryStorage();
    await serverOn(storage, { keySecret: KEY_SECRET, signingAlgorithm: 'ES256' }).jwks();
    const rotated = await rotateKeys(storage.keys, KEY_SECRET, undefined, Date.now());
    expect(rotated.map((key) => key.alg)).toEqual(['ES256', 'ES256', 'ES256']);
  });

  it('a storage without a keys store is refused with keySecret', () => {
    const storage: Storage = memoryStorage();
    delete storage.keys;
    expect(() => serverOn(storage)).toThrow(/oidc\.keySecret: the storage has no keys store/);
  });
});

describe('discovery', () => {
  it('/.well-known/openid-configuration is the RFC 8414 document, with the OpenID Connect fields', async () => {
    const t = serverOn(memoryStorage());
    const oidc = (await t.agent.get('/.well-known/openid-configuration').expect(200)).body;
    const oauth = (await t.agent.get('/.well-known/oauth-authorization-server').expect(200)).body;
    expect(oidc).toEqual(oauth);
    expect(oidc).toMatchObject({
      issuer: 'https://auth.example',
      jwks_uri: 'https://auth.example/oauth/jwks',
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      response_types_supported: ['code', 'token'],
      code_challenge_methods_supported: ['S256'],
      request_uri_parameter_supported: false,
    });
    expect(oidc.claims_supported).toEqual(expect.arrayContaining(['sub', 'iss', 'auth_time', 'nonce']));
    expect(oidc.id_token_signing_alg_values_supported).not.toContain('none');
  });

  it('without oidc: no OpenID Connect document, no JWKS, no OpenID Connect field', async () => {
    const server = createAuthorizationServer({
      baseUrl: 'https://auth.example',
      storage: memoryStorage(),
      providers: [{ name: 'Example ID', identifier: 'https://id.example/' }],
      session: { secret: 'a-session-secret-of-at-least-32-chars!!' },
    });
    const agent = supertest(express().use(discoveryRouter(server), oauthRouter(server)));
    await agent.get('/.well-known/openid-configuration').expect(404);
    await agent.get('/oauth/jwks').expect(404);
    const doc = (await agent.get('/.well-known/oauth-authorization-server').expect(200)).body;
    expect(doc).not.toHaveProperty('jwks_uri');
    expect(doc).not.toHaveProperty('id_token_signing_alg_values_supported');
  });
});

const postgres = await postgresAvailability();

describe.each([
  { engine: 'SQLite', skip: false },
  { engine: 'PostgreSQL', skip: !postgres.ok },
])('rotation through the CLI, two instances on one $engine database', ({ engine, skip }) => {
  it.skipIf(skip)(
    'a key is published before it signs and until it is retired; tokens it signed verify until then',
    async () => {
      let url: string;
      let dispose = async () => undefined as void;
      if (engine === 'SQLite') {
        url = `sqlite:${join(dir, `${Date.now()}.db`)}`;
      } else {
        const schema = uniqueSchema('oidc_keys');
        url = postgresUrlFor(schema);
        dispose = () => dropSchema(schema);
      }
      const a = await connectStorage(url, { migrate: true });
      const b = await connectStorage(url, { migrate: true });
      try {
        const [one, two] = [serverOn(a), serverOn(b)];
        const env = { OIDC_KEY_SECRET: KEY_SECRET };

        // The first keys, made by whichever instance asks first; both agree.
        const first = await one.signer();
        expect(await two.signer()).toBe(first);
        const initial = await one.jwks();
        const next = initial.find((key) => key.kid !== first)!.kid!;

        // An ID-token-like JWT signed by the first key, verified against the published keys.
        const { signer } = await one.server.oidc!.keys.current();
        const jwt = await new SignJWT({ sub: 'u' })
          .setProtectedHeader({ alg: signer.alg, kid: signer.kid })
          .sign(signer.key);
        const verifies = async (keys: JWK[]) => {
          const key = keys.find((candidate) => candidate.kid === signer.kid);
          if (!key) return false;
          await compactVerify(jwt, await importJWK(key, key.alg!));
          return true;
        };

        // rotate: the next key signs (it was published already), the first stays published.
        const rotated = await cli(url, env, 'keys', 'rotate');
        expect(rotated.error).toBeNull();
        expect(rotated.keys.find((key) => key.signs)?.kid).toBe(next);
        expect(rotated.keys.map((key) => key.state)).toEqual(['active', 'active', 'next']);

        // Each instance sees it within a minute, not before its keys are that old.
        expect(await one.signer()).toBe(first);
        one.advance(KEY_REFRESH_MS);
        two.advance(KEY_REFRESH_MS);
        expect(await one.signer()).toBe(next);
        expect(await two.signer()).toBe(next);
        const afterRotate = await two.jwks();
        expect(afterRotate.map((key) => key.kid)).toEqual(expect.arrayContaining([first, next]));
        expect(afterRotate).toHaveLength(3);
        expect(await verifies(afterRotate)).toBe(true);

        // The key that signs cannot be retired while it is the only active one.
        const newest = rotated.keys.find((key) => key.state === 'next')!.kid;
        expect((await cli(url, env, 'keys', 'retire', 'no-such-kid')).error).toMatch(/No signing key/);

        // retire the first: gone from the JWKS; what it signed no longer verifies.
        // Not at once: instances may sign with it until they read the rotation; --force does.
        expect((await cli(url, {}, 'keys', 'retire', first)).error).toMatch(
          new RegExp(
            `^The key ${next} signs now, .* may still sign with ${first}: retire ${first} in \\d+ s`,
          ),
        );
        const retired = await cli(url, {}, 'keys', 'retire', first, '--force');
        expect(retired.error).toBeNull();
        expect(retired.keys.find((key) => key.kid === first)?.state).toBe('retired');
        one.advance(KEY_REFRESH_MS);
        two.advance(KEY_REFRESH_MS);
        for (const t of [one, two]) {
          const keys = await t.jwks();
          expect(keys.map((key) => key.kid).sort()).toEqual([next, newest].sort());
          expect(await verifies(keys)).toBe(false);
        }
        expect((await cli(url, {}, 'keys', 'retire', next)).error).toMatch(/only one that signs/);
        expect((await cli(url, {}, 'keys', 'retire', first)).error).toMatch(/already retired/);

        // rotate needs the secret, from the environment only, and the right one: nothing changes.
        expect((await cli(url, {}, 'keys', 'rotate')).error).toMatch(/OIDC_KEY_SECRET/);
        const before = await a.keys.list();
        const wrong = await cli(url, { OIDC_KEY_SECRET: 'w'.repeat(40) }, 'keys', 'rotate');
        expect(wrong.error).toMatch(/cannot be opened.*nothing was changed/);
        expect(await a.keys.list()).toEqual(before);
        const listed = await cli(url, {}, 'keys', 'list');
        expect(listed.keys).toHaveLength(3);
        expect(JSON.stringify(listed.keys)).not.toMatch(/sealed|"d"/);
      } finally {
        await a.close();
        await b.close();
        await dispose();
      }
    },
  );
});
