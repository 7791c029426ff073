import session from 'express-session';
import { ephemeralKeys } from '../storage/keys.js';
import type { EphemeralStore } from '../storage/types.js';

type Callback<T = void> = (err?: unknown, value?: T) => void;

/**
 * The library's own login session's express-session store, over the storage adapter's ephemeral
 * store, so login sessions are shared by every instance that shares the storage, and expire with
 * it. It has no `touch`: the session saves itself as it marks the session seen (at most once per
 * 1 % of the idle timeout), which slides the expiry already, so an unchanged session costs no
 * write and express-session sends the answer in one piece.
 */
export class AdapterSessionStore extends session.Store {
  constructor(
    private readonly store: EphemeralStore,
    private readonly clock: () => number,
    private readonly defaultMaxAgeMs: number,
  ) {
    super();
  }

  override get(sid: string, callback: Callback<session.SessionData | null>): void {
    this.store
      .get(ephemeralKeys.session(sid), this.clock())
      .then((json) => callback(undefined, sessionOf(json)), callback);
  }

  override set(sid: string, data: session.SessionData, callback?: Callback): void {
    const now = this.clock();
    this.store
      .set(ephemeralKeys.session(sid), JSON.stringify(data), this.expiresAt(data), now)
      .then(() => callback?.(), callback);
  }

  override destroy(sid: string, callback?: Callback): void {
    this.store.delete(ephemeralKeys.session(sid)).then(() => callback?.(), callback);
  }

  /**
   * express-session reckons the cookie's expiry on the system clock; what is left of it is
   * counted from the server's clock, the one `get` checks against, so one clock decides.
   */
  private expiresAt(data: session.SessionData): number {
    const expires = data.cookie?.expires;
    const remaining = expires ? new Date(expires).getTime() - Date.now() : this.defaultMaxAgeMs;
    return this.clock() + remaining;
  }
}

/**
 * The session stored as `json`; `null` for none, and for a value that is not a session's JSON (a
 * row written by something else, or damaged): the request then starts a new session instead of
 * failing.
 */
function sessionOf(json: string | null): session.SessionData | null {
  if (json === null) return null;
  try {
    const data: unknown = JSON.parse(json);
    return typeof data === 'object' && data !== null ? (data as session.SessionData) : null;
  } catch {
    return null;
  }
}
