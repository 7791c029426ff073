import type session from 'express-session';
import { describe, expect, it } from 'vitest';
import { memoryEphemeralStore } from '../../src/storage/index.js';
import { AdapterSessionStore } from '../../src/session/adapter-store.js';

/**
 * `AdapterSessionStore`, the library's own login session's store: sessions expire with the
 * server's clock, and it has no `touch` (the library re-saves its session as it marks it seen).
 */
const call = <T>(run: (done: (err?: unknown, value?: T) => void) => void) =>
  new Promise<T | undefined>((resolve, reject) => run((err, value) => (err ? reject(err) : resolve(value))));

function sessionData(expires: number): session.SessionData {
  return { cookie: { originalMaxAge: 60_000, expires: new Date(expires) } } as session.SessionData;
}

describe('AdapterSessionStore', () => {
  it('keeps a session until the expiry its cookie gives, counted on the server clock', async () => {
    let now = Date.now();
    const store = new AdapterSessionStore(memoryEphemeralStore(), () => now, 60_000);
    await call((done) => store.set('sid', sessionData(Date.now() + 60_000), done));
    now += 50_000;
    expect(await call((done) => store.get('sid', done))).not.toBeNull();
    now += 20_000;
    expect(await call((done) => store.get('sid', done))).toBeNull();
  });

  it('has no touch, so express-session never calls one', () => {
    const store = new AdapterSessionStore(memoryEphemeralStore(), Date.now, 60_000);
    expect(typeof (store as { touch?: unknown }).touch).toBe('undefined');
  });

  it('reads a stored value that is not a session (damaged, or written by something else) as no session', async () => {
    const ephemeral = memoryEphemeralStore();
    const store = new AdapterSessionStore(ephemeral, Date.now, 60_000);
    const later = Date.now() + 60_000;
    for (const value of ['{not json', '"a string"', 'null', '42']) {
      await ephemeral.set('session:sid', value, later, Date.now());
      expect(await call((done) => store.get('sid', done)), value).toBeNull();
    }
  });
});
