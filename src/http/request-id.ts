import type { Request, RequestHandler, Response } from 'express';
import { randomId } from '../crypto/secrets.js';

/**
 * An incoming `X-Request-Id` is kept when it is short and plain (a UUID, a load balancer's trace
 * id); anything else could smuggle text into logs, and is replaced.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:/+=-]{0,127}$/;

interface RequestIdLocals {
  requestId?: string;
}

/**
 * The request's id, chosen once: one the response already carries (the host's own request-id
 * middleware), a sane incoming `X-Request-Id`, or a new UUID. It is sent back as `X-Request-Id`
 * and is what logs and the `onError` hook receive.
 */
export function requestIdOf(req: Request, res: Response): string {
  const locals = res.locals as RequestIdLocals;
  if (locals.requestId !== undefined) return locals.requestId;
  // The Node accessors: Express's res.get and req.get add nothing for this header.
  const already = res.getHeader('X-Request-Id');
  const incoming = req.headers['x-request-id'];
  const id =
    typeof already === 'string' && SANE_REQUEST_ID.test(already)
      ? already
      : typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming)
        ? incoming
        : randomId();
  locals.requestId = id;
  if (!res.headersSent) res.setHeader('X-Request-Id', id);
  return id;
}

/** Gives the request its id before anything can fail. */
export const requestId: RequestHandler = (req, res, next) => {
  requestIdOf(req, res);
  next();
};
