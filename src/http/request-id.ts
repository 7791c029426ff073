import type { Request, Response } from 'express';
import { randomId } from '../crypto/secrets.js';

/**
 * An incoming `X-Request-Id` is kept when it is short and plain (a UUID, a load balancer's trace
 * id); anything else could smuggle text into logs, and is replaced.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:/+=-]{0,127}$/;

/**
 * The request's id, chosen once and kept on the response as `X-Request-Id`: one the response
 * already carries (the host's own request-id middleware, or an earlier call), a sane incoming
 * `X-Request-Id`, or a new UUID. It is what logs, the `onError` hook and events receive.
 */
export function requestIdOf(req: Request, res: Response): string {
  // The Node accessors: Express's res.get and req.get add nothing for this header.
  const already = res.getHeader('X-Request-Id');
  if (typeof already === 'string' && SANE_REQUEST_ID.test(already)) return already;
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomId();
  if (!res.headersSent) res.setHeader('X-Request-Id', id);
  return id;
}
