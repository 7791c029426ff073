import session from 'express-session';
import type { SessionStore } from '../storage/types.js';

type Callback<T = void> = (err?: unknown, value?: T) => void;

/**
 * An express-session store over the storage adapter's `sessions` domain, so the login session is
 * as durable and as shared between instances as the rest of the storage.
 */
export class AdapterSessionStore extends session.Store {
  constructor(
    private readonly sessions: SessionStore,
    private readonly clock: () => number,
    private readonly defaultMaxAgeMs: number,
  ) {
    super();
  }

  override get(sid: string, callback: Callback<session.SessionData | null>): void {
    this.sessions
      .get(sid, this.clock())
      .then(
        (json) => callback(undefined, json === null ? null : (JSON.parse(json) as session.SessionData)),
        callback,
      );
  }

  override set(sid: string, data: session.SessionData, callback?: Callback): void {
    this.sessions.set(sid, JSON.stringify(data), this.expiresAt(data)).then(() => callback?.(), callback);
  }

  override touch(sid: string, data: session.SessionData, callback?: Callback): void {
    this.sessions.touch(sid, this.expiresAt(data)).then(() => callback?.(), callback);
  }

  override destroy(sid: string, callback?: Callback): void {
    this.sessions.destroy(sid).then(() => callback?.(), callback);
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
