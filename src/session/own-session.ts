import type { RequestHandler } from 'express';
import session from 'express-session';
import onHeaders from 'on-headers';

/**
 * Runs the library's own express-session on its routes without disturbing a host session.
 *
 * express-session does nothing when `req.session` is already set, so under a host's session
 * middleware it would silently write the library's state into the host's session and cookie. This
 * step sets the host's session aside while the library's middleware and handlers run, and puts it
 * back before the host's own hooks look at it: its header hook (which sets the host's cookie) and
 * its end-of-response hook (which saves the host's session). Hooks run in reverse order of
 * registration, so registering the restore before the library's session places it between the
 * library's hooks and the host's.
 */
export function ownSession(options: session.SessionOptions): RequestHandler {
  const middleware = session(options);
  return (req, res, next) => {
    if (req.session === undefined) return middleware(req, res, next);
    const host = { session: req.session, sessionID: req.sessionID };
    const restore = () => {
      req.session = host.session;
      req.sessionID = host.sessionID;
    };
    onHeaders(res, restore);
    const hostEnd = res.end;
    res.end = function restoreHostSession(this: typeof res, ...args: Parameters<typeof res.end>) {
      // The headers go now, while req.session is still the library's: its cookie is set from a
      // header hook, which must not see the host's session.
      if (!res.headersSent) res.writeHead(res.statusCode);
      restore();
      res.end = hostEnd;
      return hostEnd.apply(this, args);
    } as typeof res.end;
    // Cast needed: @types/express-session declares both properties as always present.
    delete (req as { session?: unknown }).session;
    delete (req as { sessionID?: unknown }).sessionID;
    middleware(req, res, next);
  };
}
