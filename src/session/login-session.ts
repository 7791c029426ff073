import type { Request, RequestHandler, Response } from 'express';
import session from 'express-session';
import { LIBRARY_STATE_KEY, type BridgeSessionState } from './state.js';

export interface LoginSessionOptions {
  /** The cookie's name; over https it is `__Host-` prefixed. */
  cookieName: string;
  secret: string | string[];
  store: session.Store;
  /** `Secure` cookie: `__Host-` prefix, `Path=/`, no `Domain`. */
  secure: boolean;
  /** The cookie's path when not secure (the routers' mount path). */
  path: string;
  /** Ends a session this long after its last request, in ms (kept in the library's state; the store's expiry). */
  idleMs: number;
  /** Ends a session this long after it started, however active, in ms. */
  absoluteMs: number;
  clock: () => number;
}

/** The cookie name actually used: `__Host-` prefixed over https, so no other host can set it. */
function sessionCookieName(name: string, secure: boolean): string {
  return secure && !name.startsWith('__Host-') ? `__Host-${name}` : name;
}

/**
 * The library's login session: express-session, used plainly (`saveUninitialized: false`, the
 * cookie set once), with what express-session leaves to its user:
 *
 * - a request that carries two cookies of the session's name is treated as carrying none, so a
 *   cookie planted by a sibling subdomain or set for a narrower path cannot shadow the user's own
 *   (login CSRF);
 * - an idle timeout and an absolute lifetime, kept in the library's state and enforced here on
 *   the server whatever the store: a session idle for `idleMs`, or older than `absoluteMs`
 *   however active, is replaced by a new, empty one;
 * - the cookie lives as long as the browser session (no `Expires`, as OWASP advises for session
 *   cookies), so it is set once, not on every answer; the store keeps a session `idleMs` past
 *   its last use;
 * - over https the cookie is `__Host-` prefixed, `Secure`, `Path=/`, with no `Domain`;
 * - it runs on a request of its own, which the returned {@link SessionLoader} resolves: the
 *   host's `req.session` (its own express-session's, or none) is never set or replaced, so a
 *   host's `authenticatedAccount` hook reading `req.session` reads the host's session.
 */
export function loginSession(options: LoginSessionOptions): SessionLoader {
  const name = sessionCookieName(options.cookieName, options.secure);
  const middleware = session({
    name,
    secret: options.secret,
    store: options.store,
    resave: false,
    saveUninitialized: false,
    rolling: false,
    proxy: undefined,
    cookie: {
      httpOnly: true,
      // Lax: the provider's callback is a top-level GET navigation from another site.
      sameSite: 'lax',
      secure: options.secure,
      path: options.secure ? '/' : options.path,
    },
  });
  return (req, res) =>
    new Promise((resolve, reject) => {
      dropShadowedCookie(req, name);
      const own = requestOfItsOwn(req);
      middleware(own, res, (err?: unknown) => {
        if (err) return reject(err);
        if (!outlived(own, options)) return resolve(own);
        own.session.regenerate((failed: unknown) => (failed ? reject(failed) : resolve(own)));
      });
    });
}

/**
 * Runs the login session's express-session for a request; resolves the request that carries the
 * session: the host's own session is on `req`; the library's own is on a request of its own.
 */
export type SessionLoader = (req: Request, res: Response) => Promise<Request>;

/**
 * A request that reads everything from `req` but keeps a session of its own. express-session does
 * nothing when `req.session` is set, and its hooks (the cookie as the headers go, the save at
 * the end) read the request they were given: on this one, the library's express-session and the
 * host's each set their own cookie and save their own session, and neither session is ever
 * swapped on `req`. Its prototype hides the host's session, so that express-session, which
 * deletes `session` when a session is destroyed, never finds the host's underneath.
 */
function requestOfItsOwn(req: Request): Request {
  const none = { value: undefined, writable: true, configurable: true };
  const hidden = Object.create(req, { session: none, sessionID: none, sessionStore: none }) as Request;
  return Object.create(hidden) as Request;
}

/** How many cookies named `name` a `Cookie` header carries. */
function cookieCount(header: string, name: string): number {
  let count = 0;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if ((eq === -1 ? part : part.slice(0, eq)).trim() === name) count++;
  }
  return count;
}

/** Two cookies of the session's name: neither is trusted, the request carries no session. */
function dropShadowedCookie(req: Request, name: string): void {
  const header = req.headers.cookie;
  if (header === undefined || !header.includes(name) || cookieCount(header, name) < 2) return;
  req.headers.cookie = header
    .split(';')
    .filter((part) => {
      const eq = part.indexOf('=');
      return (eq === -1 ? part : part.slice(0, eq)).trim() !== name;
    })
    .join(';');
}

/**
 * The host's own express-session (`session.middleware`), run unless the host already ran it, with
 * the library's idle timeout and absolute lifetime: past either, the library's state is dropped
 * from the host's session (the host's own keys stay). The cookie and its name are the host's.
 */
export function hostLoginSession(middleware: RequestHandler, options: Lifetimes): SessionLoader {
  return (req, res) =>
    new Promise((resolve, reject) => {
      const loaded = (err?: unknown) => {
        if (err) return reject(err);
        if (req.session === undefined) {
          return reject(new TypeError('session.middleware did not set req.session: pass express-session'));
        }
        if (outlived(req, options))
          delete (req.session as unknown as Record<string, unknown>)[LIBRARY_STATE_KEY];
        resolve(req);
      };
      if (req.session !== undefined) return loaded();
      middleware(req, res, loaded);
    });
}

type Lifetimes = Pick<LoginSessionOptions, 'idleMs' | 'absoluteMs' | 'clock'>;

/**
 * Whether the library's state in this session has outlived its idle timeout or its absolute
 * lifetime. A live one is marked as seen now, at most once per hundredth of the idle timeout
 * (a write of the session; the others only read it).
 */
function outlived(req: Request, { idleMs, absoluteMs, clock }: Lifetimes): boolean {
  const state = (req.session as unknown as Record<string, BridgeSessionState | undefined> | undefined)?.[
    LIBRARY_STATE_KEY
  ];
  if (state?.startedAt === undefined) return false;
  const now = clock();
  const seen = state.lastSeenAt ?? state.startedAt;
  if (now - state.startedAt >= absoluteMs || now - seen >= idleMs) return true;
  if (now - seen >= idleMs / 100) state.lastSeenAt = now;
  return false;
}
