import type { Request, RequestHandler, Response } from 'express';
import { toOAuthError } from '../errors/oauth-error.js';
import { reportFailure } from '../errors/report.js';
import { reportServerError } from '../events/emit.js';
import type { AuthorizationServer } from '../server.js';

/**
 * Saves a changed login session before the response leaves, not while it does.
 *
 * express-session sends the status line, the headers and all but the last byte of the body, and
 * only then waits for the store. A browser follows a redirect as soon as it has the headers, so
 * the next step (the login callback, the consent post) can reach this or another instance before
 * the session holding its state is stored: "no login in progress". Saving first closes that race.
 * If the save fails (the storage is down) the browser gets the error page instead of a page or
 * redirect that would lead nowhere.
 */
export function saveSessionFirst(server: AuthorizationServer): RequestHandler {
  return (req, res, next) => {
    const before = { id: req.sessionID, print: fingerprint(req) };
    const end = res.end;
    res.end = function endAfterSave(this: Response, ...args: unknown[]) {
      res.end = end;
      const changed =
        req.session !== undefined && (req.sessionID !== before.id || fingerprint(req) !== before.print);
      if (!changed || res.headersSent) return (end as (...a: unknown[]) => Response).apply(this, args);
      req.session.save((err: unknown) => {
        if (err === undefined || err === null) {
          // The headers go now, while req.session is still the library's: express-session sets
          // its cookie from a header hook, and next to a host session (own-session.ts) the
          // host's is put back at the end.
          if (!res.headersSent) res.writeHead(res.statusCode);
          (end as (...a: unknown[]) => Response).apply(this, args);
          return;
        }
        const error = toOAuthError(err);
        reportFailure(server, error, req, res);
        reportServerError(server, req, 'authorization', error);
        const page = server.pages.error({
          status: error.status,
          title: error.status === 503 ? 'Temporarily unavailable' : 'Something went wrong',
          message: error.description,
        });
        res.removeHeader('Location');
        res.removeHeader('ETag');
        res.status(error.status).set(error.headers).type('html');
        res.set('Content-Length', String(Buffer.byteLength(page)));
        end.call(this, page, 'utf8');
      });
      return this;
    } as typeof res.end;
    next();
  };
}

/** The session's content, without its cookie (as express-session compares it). */
function fingerprint(req: Request): string {
  const session = req.session as unknown as Record<string, unknown> | undefined;
  return session === undefined ? '' : JSON.stringify({ ...session, cookie: undefined });
}
