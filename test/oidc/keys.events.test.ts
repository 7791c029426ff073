/**
 * The signing keys the server makes are reported (issue 41, the audit trail's key changes): the
 * first keys at first use, and a next key when none waits (a rotation cut short), by the instance
 * that made it; the event names the key's public id, never its private part.
 */
import express from 'express';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { createAuthorizationServer, memoryStorage, oauthRouter, type ServerEvent } from '../../src/index.js';
import { KEY_REFRESH_MS, rotateKeys } from '../../src/oidc/keys.js';

const KEY_SECRET = 'a-key-secret-of-at-least-32-characters!!';

describe('signing_key.created', () => {
  it('reports the first keys, then a next key made when none waited, with public fields only', async () => {
    const storage = memoryStorage();
    let now = Date.now();
    const server = createAuthorizationServer({
      baseUrl: 'https://auth.example',
      storage,
      providers: [{ name: 'Example ID', identifier: 'https://id.example/' }],
      session: { secret: 'a-session-secret-of-at-least-32-chars!!' },
      clock: () => now,
      oidc: { keySecret: KEY_SECRET },
    });
    const events: ServerEvent[] = [];
    server.events.on('signing_key.created', (event) => void events.push(event));
    const agent = supertest(express().use(oauthRouter(server)));

    const first = (await agent.get('/oauth/jwks').expect(200)).body.keys as { kid: string }[];
    const stored = await storage.keys!.list();
    const stateOf = (kid: string) => stored.find((key) => key.kid === kid)!.state;
    expect(events).toEqual(
      first.map((key) => ({
        type: 'signing_key.created',
        kid: key.kid,
        alg: 'RS256',
        state: stateOf(key.kid),
        at: now,
      })),
    );
    expect(events.map((event) => (event as { state: string }).state).sort()).toEqual(['active', 'next']);
    // Read again within the minute: nothing made, nothing reported.
    await agent.get('/oauth/jwks').expect(200);
    expect(events).toHaveLength(2);

    // A rotation (the CLI's) makes its own next key: the server makes none.
    await rotateKeys(storage.keys!, KEY_SECRET, undefined, now);
    now += KEY_REFRESH_MS;
    await agent.get('/oauth/jwks').expect(200);
    expect(events).toHaveLength(2);
    // With no next key waiting (retired, or a rotation cut short), the server makes one.
    const afterRotation = new Set((await storage.keys!.list()).map((key) => key.kid));
    await storage.keys!.save({
      ...(await storage.keys!.list()).find((key) => key.state === 'next')!,
      state: 'retired',
      retiredAt: now,
    });
    now += KEY_REFRESH_MS;
    await agent.get('/oauth/jwks').expect(200);
    expect(events).toHaveLength(3);
    const made = events[2] as { kid: string; state: string };
    expect(made.state).toBe('next');
    expect(afterRotation.has(made.kid)).toBe(false);
    const sealed = stored.map((key) => key.sealedPrivateJwk);
    for (const secret of [KEY_SECRET, ...sealed]) expect(JSON.stringify(events)).not.toContain(secret);
  });
});
