import session from 'express-session';
import { ephemeralKeys } from '../storage/keys.js';
import type { EphemeralStore } from '../storage/types.js';

type Callback<T = void> = (err?: unknown, value?: T) => void;

/**
 * An express-session store over the storage adapter's ephemeral store, so login sessions are
 * shared by every instance that shares the storage, and expire with it.
 *
 * `touch` slides an unchanged session's expiry, as a rolling cookie needs. The library's own
 * login session builds it with `{ touch: false }`: that session saves itself as it marks the
 * session seen (at most once per 1 % of the idle timeout), which slides the expiry already; an
 * unchanged session then costs no write, and express-session sends the answer in one piece
 * instead of holding its last byte until a touch returns.
 */
export class AdapterSessionStore extends session.Store {
  /**
   * Session id → the expiry this process last stored for it. express-session touches an
   * unchanged session on every request to slide its expiry; a touch that would move the stored
   * expiry by less than 1% of the lifetime is skipped (connect-mongo's `touchAfter`), which saves
   * a write per request and leaves sessions ending at most that much early.
   */
  readonly #stored = new Map<string, number>();

  constructor(
    private readonly store: EphemeralStore,
    private readonly clock: () => number,
    private readonly defaultMaxAgeMs: number,
    options: { touch?: boolean } = {},
  ) {
    super();
    // express-session touches only through a store whose `touch` is a function.
    if (options.touch === false) Object.defineProperty(this, 'touch', { value: undefined });
  }

  override get(sid: string, callback: Callback<session.SessionData | null>): void {
    this.store
      .get(ephemeralKeys.session(sid), this.clock())
      .then((json) => callback(undefined, sessionOf(json)), callback);
  }

  override set(sid: string, data: session.SessionData, callback?: Callback): void {
    const expiresAt = this.expiresAt(data);
    const now = this.clock();
    this.store.set(ephemeralKeys.session(sid), JSON.stringify(data), expiresAt, now).then(() => {
      this.remember(sid, expiresAt);
      callback?.();
    }, callback);
  }

  override touch(sid: string, data: session.SessionData, callback?: Callback): void {
    const expiresAt = this.expiresAt(data);
    const stored = this.#stored.get(sid);
    if (stored !== undefined && expiresAt - stored < this.defaultMaxAgeMs / 100) {
      callback?.();
      return;
    }
    this.store.set(ephemeralKeys.session(sid), JSON.stringify(data), expiresAt, this.clock()).then(() => {
      this.remember(sid, expiresAt);
      callback?.();
    }, callback);
  }

  override destroy(sid: string, callback?: Callback): void {
    this.#stored.delete(sid);
    this.store.delete(ephemeralKeys.session(sid)).then(() => callback?.(), callback);
  }

  /** Bounded: forgetting only costs one write more. */
  private remember(sid: string, expiresAt: number): void {
    if (this.#stored.size >= 10_000 && !this.#stored.has(sid)) this.#stored.clear();
    this.#stored.set(sid, expiresAt);
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
