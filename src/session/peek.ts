import { parse as parseCookies } from 'cookie';
import { unsign } from 'cookie-signature';
import type { Request } from 'express';
import type { SessionData, Store } from 'express-session';
import { cookieCount } from './login-session.js';
import { sessionStateOf, type BridgeSessionState } from './state.js';

/** A login session read without express-session: its id, its data and the library's part. */
export interface PeekedSession {
  sid: string;
  data: SessionData;
  state: BridgeSessionState;
  /** What express-session does for an unchanged session: slide its expiry in the store. */
  touch(): Promise<void>;
}

export interface SessionPeekOptions {
  cookieName: string;
  /** The secrets of the cookie's signature, the current one first (express-session's `secret`). */
  secrets: readonly string[];
  store: Store;
}

/**
 * Reads the library's session as express-session would (the same cookie, signature and store),
 * without building its request-scoped machinery. For the authorization request of a user who is
 * logged in and already trusts the client, the session is only read, never changed: the endpoint
 * answers at once from it, and leaves every other case to the express-session route. Resolves
 * `undefined` when there is no cookie, its signature is wrong, or the store has no such session.
 */
export function sessionPeek(
  options: SessionPeekOptions,
): (req: Request) => Promise<PeekedSession | undefined> {
  const { cookieName, secrets, store } = options;
  return async (req) => {
    const header = req.headers.cookie;
    if (header === undefined || !header.includes(cookieName)) return undefined;
    // Two cookies of the session's name: neither is trusted (as loginSession does).
    if (cookieCount(header, cookieName) > 1) return undefined;
    const raw = parseCookies(header)[cookieName];
    if (raw === undefined || !raw.startsWith('s:')) return undefined;
    let sid: string | false = false;
    for (const secret of secrets) {
      sid = unsign(raw.slice(2), secret);
      if (sid !== false) break;
    }
    if (sid === false) return undefined;
    const id = sid;
    const data = await new Promise<SessionData | null | undefined>((resolve, reject) =>
      store.get(id, (err, session) => (err ? reject(err) : resolve(session))),
    );
    if (!data?.cookie) return undefined;
    return {
      sid: id,
      data,
      state: sessionStateOf(data),
      touch: () => touch(store, id, data),
    };
  };
}

/** As express-session: the cookie's expiry moves to now plus its lifetime, then the store is told. */
function touch(store: Store, sid: string, data: SessionData): Promise<void> {
  const maxAge = data.cookie.originalMaxAge;
  if (typeof maxAge !== 'number' || typeof store.touch !== 'function') return Promise.resolve();
  data.cookie.expires = new Date(Date.now() + maxAge);
  return new Promise((resolve, reject) => {
    // Typed without an argument, but stores pass their error as express-session expects.
    const done = (err?: unknown) => (err ? reject(err) : resolve());
    store.touch!(sid, data, done as () => void);
  });
}
