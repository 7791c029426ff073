import type { NextFunction, Request, Response } from 'express';

/**
 * Answers `HEAD` with 405 (`Allow: GET`) on a route whose `GET` has side effects (it issues a
 * code, starts a login, stores a session). Express answers `HEAD` with the `GET` handler, so a
 * link preview or a monitoring probe would otherwise issue codes and create sessions.
 */
export function refuseHead(req: Request, res: Response, next: NextFunction): void {
  if (req.method !== 'HEAD') return next();
  res.status(405).set('Allow', 'GET').end();
}
