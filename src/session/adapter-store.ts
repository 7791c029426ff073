import session from 'express-session';
import { ephemeralKeys } from '../storage/keys.js';
import type { EphemeralStore } from '../storage/types.js';

type Callback<T = void> = (err?: unknown, value?: T) => void;

/**
 * An express-session store over the storage adapter's ephemeral store, so login sessions are
 * shared by every instance that shares the storage, and expire with it.
 *
 * It has no `touch`: a session is kept until its lifetime after its last save. The library's own
 * session saves itself as it marks the session seen (at most once per 1 % of the idle timeout),
 * which slides that expiry; an unchanged session costs no write, and express-session then sends
 * the answer in one piece instead of holding its last byte until a touch returns.
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
      .then(
        (json) => callback(undefined, json === null ? null : (JSON.parse(json) as session.SessionData)),
        callback,
      );
  }

  override set(sid: string, data: session.SessionData, callback?: Callback): void {
    const expiresAt = this.expiresAt(data);
    const now = this.clock();
    this.store
      .set(ephemeralKeys.session(sid), JSON.stringify(data), expiresAt, now)
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
