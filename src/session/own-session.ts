import type { RequestHandler } from 'express';
import session from 'express-session';

/**
 * Runs the library's own express-session on its routes without disturbing a host session.
 *
 * express-session does nothing when `req.session` is already set, so under a host's session
 * middleware it would silently write the library's state into the host's session and cookie. This
 * step sets the host's session aside for the library's middleware and puts it back just before the
 * host's own end-of-response hook runs, so each session is saved under its own cookie.
 */
export function ownSession(options: session.SessionOptions): RequestHandler {
  const middleware = session(options);
  return (req, res, next) => {
    if (req.session === undefined) return middleware(req, res, next);
    const host = { session: req.session, sessionID: req.sessionID };
    const hostEnd = res.end;
    res.end = function restoreHostSession(this: typeof res, ...args: Parameters<typeof res.end>) {
      req.session = host.session;
      req.sessionID = host.sessionID;
      res.end = hostEnd;
      return hostEnd.apply(this, args);
    } as typeof res.end;
    // Cast needed: @types/express-session declares both properties as always present.
    delete (req as { session?: unknown }).session;
    delete (req as { sessionID?: unknown }).sessionID;
    middleware(req, res, next);
  };
}
