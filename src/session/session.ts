import type { Request } from 'express';
import { LIBRARY_STATE_KEY, type BridgeSessionState } from './state.js';

type SessionRecord = Record<string, unknown>;

/** What a request without the library's session state reads: nothing, and it stays nothing. */
const NONE: Readonly<BridgeSessionState> = Object.freeze({});

/**
 * The login session of one request, over express-session's `session` on the request that
 * `SessionLoader` resolves (the host's session is on `req`; the library's own on a request of its
 * own). Reading never creates or changes anything, so a visitor who only reads (an error page, a selection page) gets no
 * session row and no cookie; every write marks the session changed, and the pipeline saves a
 * changed session before the answer leaves.
 *
 * With the library's own session, login and logout give a new session id and end the old one.
 * With the host's session (`session.middleware`), the library owns only its key: a login gives a
 * new session id that keeps the host's keys, and a logout removes only the library's state.
 */
export class LoginSession {
  #changed = false;

  constructor(
    /** The request that carries the session (see `SessionLoader`). */
    private readonly req: Request,
    private readonly now: () => number,
    /** The library's own session, not the host's. */
    private readonly own: boolean,
  ) {}

  /** The library's part, for reading. */
  get state(): Readonly<BridgeSessionState> {
    return (this.session()?.[LIBRARY_STATE_KEY] as BridgeSessionState | undefined) ?? NONE;
  }

  /** Whether this request changed the session: the pipeline then saves it before answering. */
  get changed(): boolean {
    return this.#changed;
  }

  /** The library's part, for writing: created on first use, stamped with the start of its lifetime. */
  write(): BridgeSessionState {
    this.#changed = true;
    const session = this.session()!;
    return ((session[LIBRARY_STATE_KEY] as BridgeSessionState | undefined) ??= { startedAt: this.now() });
  }

  /**
   * The request to run a login strategy on: `req` (the request, or a view of it) with this
   * session as its `session`, where a strategy keeps its state (passport's convention); counted
   * as a change.
   */
  forStrategy(req: Request): Request {
    this.#changed = true;
    const { session } = this.req;
    return req.session === session ? req : (Object.create(req, { session: { value: session } }) as Request);
  }

  /** What a login strategy keeps in the session under `key`, for reading. */
  strategyState(key: string): unknown {
    return this.session()?.[key];
  }

  /** Ends the authorization in progress: once answered, its consent form cannot be replayed. */
  clearPending(): void {
    const { pending, csrf } = this.state;
    if (pending === undefined && csrf === undefined) return;
    const state = this.write();
    delete state.pending;
    delete state.csrf;
  }

  /**
   * A new session id, as at every login (no session fixation, RFC 6819 4.4.1.x), with a fresh
   * state of the library's in it: the old id ends.
   */
  async regenerate(): Promise<BridgeSessionState> {
    await this.newId();
    return this.write();
  }

  /** Signs out: the library's own session is destroyed; in a host session only its state goes. */
  async end(): Promise<void> {
    if (!this.own) return this.newId();
    await new Promise<void>((resolve, reject) =>
      this.req.session.destroy((err: unknown) => (err ? reject(err) : resolve())),
    );
    this.#changed = false;
  }

  /** A new session id; a host session keeps the host's keys, none of the library's state. */
  private async newId(): Promise<void> {
    const kept = this.own ? {} : this.hostKeys();
    await new Promise<void>((resolve, reject) =>
      this.req.session.regenerate((err: unknown) => (err ? reject(err) : resolve())),
    );
    Object.assign(this.req.session, kept);
    this.#changed = true;
  }

  /** Stores the session now; the pipeline calls it when {@link changed}. */
  save(): Promise<void> {
    return new Promise((resolve, reject) =>
      this.req.session.save((err: unknown) => (err ? reject(err) : resolve())),
    );
  }

  private session(): SessionRecord | undefined {
    return this.req.session as unknown as SessionRecord | undefined;
  }

  /** The host's own keys of its session: everything but the cookie and the library's state. */
  private hostKeys(): SessionRecord {
    const kept: SessionRecord = {};
    for (const [key, value] of Object.entries(this.session() ?? {})) {
      if (key !== 'cookie' && key !== LIBRARY_STATE_KEY) kept[key] = value;
    }
    return kept;
  }
}
