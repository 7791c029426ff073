import type { Request, RequestHandler, Response } from 'express';

/**
 * Runs an Express middleware that ends by calling `next()` or `next(error)` (a body parser,
 * express-rate-limit) as a promise, for an endpoint written as one async step.
 */
export function runStep(step: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    void step(req, res, (error?: unknown) => (error === undefined ? resolve() : reject(error)));
  });
}
